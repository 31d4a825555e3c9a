package dev.privacyrelay.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privacyrelay.RelayClient;
import dev.privacyrelay.RelayResponse;
import dev.privacyrelay.RelayStream;
import dev.privacyrelay.StreamEvent;
import dev.privacyrelay.Verification;
import dev.privacyrelay.engine.EngineException;
import dev.privacyrelay.errors.ApiException;
import dev.privacyrelay.errors.AuthenticationException;
import dev.privacyrelay.errors.InsufficientBalanceException;
import dev.privacyrelay.errors.NotFoundException;
import dev.privacyrelay.errors.GatewayIdentityException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against a real gateway process and the fake provider: the provider never sees an original value. */
class EndToEndTest {
    static final String EMAIL = "jane.doe@example.com";
    static final String PHONE = "+44 20 7946 0958";
    static final String IBAN = "DE89 3704 0044 0532 0130 00";
    static final String PROMPT = "Write to " + EMAIL + " and call " + PHONE + " about IBAN " + IBAN + ".";

    TestGateway relay;
    RelayClient client;

    @BeforeEach
    void setUp() throws Exception {
        relay = TestGateway.shared();
        String[] key = relay.fundedKey();
        client = RelayClient.builder().gatewayUrl(relay.url).apiKeyFile(TestGateway.keyFile(key[0]).toString()).retries(0)
                .configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
        relay.resetProvider();
    }

    static Map<String, Object> user(String text) {
        return Map.of("role", "user", "content", text);
    }

    /** Everything the provider received, and the check that no original is in it. */
    void assertProviderSawNoOriginal() throws Exception {
        JsonNode received = relay.received();
        assertFalse(received.isEmpty(), "the provider was called");
        String all = received.toString();
        for (String original : List.of(EMAIL, PHONE, IBAN)) assertFalse(all.contains(original), original + " reached the provider: " + all);
    }

    @Test
    void aChatCompletionIsRestoredReceiptedAndTheProviderSawNoOriginal() throws Exception {
        RelayResponse answer = client.chat().completions().create(Map.of("model", "local-chat", "messages", List.of(user(PROMPT))));
        assertTrue(answer.text().contains(EMAIL), answer.text()); // the fake provider echoes the (tokenised) prompt
        assertTrue(answer.text().contains(PHONE));
        assertNotNull(answer.requestId());
        assertNotNull(answer.receipt(), "X-Service-Receipt-V2");
        assertEquals(Boolean.TRUE, answer.receiptVerified(), String.valueOf(answer.receiptVerification()));
        assertEquals(Boolean.TRUE, answer.countersignatureVerified(), "the gateway countersigned this call's attestation");
        assertFalse(answer.tokenisedRequest().contains(EMAIL));
        assertProviderSawNoOriginal();
        JsonNode headers = relay.received().get(0).get("headers");
        assertFalse(headers.toString().toLowerCase().contains("x-service-attestation"), "the attestation stays at the gateway");
    }

    @Test
    void aStreamedChatRestoresAliasesCutAcrossFramesAndVerifiesItsTrailer() throws Exception {
        try (RelayStream stream = client.chat().completions().createStreaming(Map.of("model", "local-chat", "messages", List.of(user(PROMPT))))) {
            List<StreamEvent> events = stream.stream().toList();
            String text = events.stream().map(StreamEvent::text).collect(Collectors.joining());
            assertTrue(text.contains(EMAIL) && text.contains(PHONE) && text.contains(IBAN), text);
            assertFalse(text.contains("<EMAIL_"), text);
            assertTrue(events.size() > 5, "streamed in pieces");
            assertNotNull(stream.receipt(), "receipt-v2 trailer");
            assertEquals(Boolean.TRUE, stream.receiptVerified(), String.valueOf(stream.receiptVerification()));
        }
        assertProviderSawNoOriginal();
    }

    @Test
    void messagesJsonAndStreamed() throws Exception {
        Map<String, Object> body = Map.of("model", "local-chat", "max_tokens", 64, "messages", List.of(user("Call " + PHONE + ".")));
        RelayResponse answer = client.messages().create(body);
        assertTrue(answer.text().contains(PHONE), answer.text());
        assertEquals(Boolean.TRUE, answer.receiptVerified());
        try (RelayStream stream = client.messages().createStreaming(body)) {
            List<StreamEvent> events = stream.stream().toList();
            assertTrue(events.stream().anyMatch(e -> "message_stop".equals(e.event())));
            assertTrue(events.stream().map(StreamEvent::text).collect(Collectors.joining()).contains(PHONE));
            assertEquals(Boolean.TRUE, stream.receiptVerified());
        }
        assertProviderSawNoOriginal();
    }

    @Test
    void embeddingsModelsAndTokenCount() throws Exception {
        RelayResponse answer = client.embeddings().create(Map.of("model", "local-embed", "input", "Contact " + EMAIL));
        assertTrue(answer.body().get("data").isArray() && !answer.body().get("data").isEmpty());
        assertEquals(Boolean.TRUE, answer.receiptVerified());
        assertProviderSawNoOriginal();
        assertTrue(client.models().list().get("data").isArray());
        RelayResponse count = client.messages().countTokens(Map.of("model", "local-chat", "messages", List.of(user("Call " + PHONE))));
        assertTrue(count.body().get("input_tokens").asInt() > 0, count.toString());
    }

    @Test
    void theResponsesRouteJsonAndStreamed() throws Exception {
        RelayResponse answer = client.responses().create(Map.of("model", "local-chat", "input", "Draft a reply to " + EMAIL + "."));
        assertTrue(answer.text().contains(EMAIL), answer.toString());
        assertEquals(Boolean.TRUE, answer.receiptVerified());
        try (RelayStream stream = client.responses().createStreaming(Map.of("model", "local-chat", "input", "Draft a reply to " + EMAIL + "."))) {
            String text = stream.stream().map(StreamEvent::text).collect(Collectors.joining());
            assertTrue(text.contains(EMAIL), text);
            assertEquals(Boolean.TRUE, stream.receiptVerified());
        }
        assertProviderSawNoOriginal();
    }

    @Test
    void aTamperedReceiptIsInvalidWithAReason() {
        RelayResponse answer = client.chat().completions().create(Map.of("model", "local-chat", "messages", List.of(user("hi"))));
        ObjectNode tampered = answer.receipt().deepCopy();
        tampered.put("output_tokens", tampered.path("output_tokens").asInt() + 1);
        Verification v = client.verifyReceipt(tampered);
        assertFalse(v.valid());
        assertNotNull(v.reason());
        assertTrue(client.verifyReceipt(answer.receipt()).valid());
    }

    @Test
    void aFieldTheEgressPolicyRefusesIsATypedErrorAndNothingReachesTheProvider() throws Exception {
        Map<String, Object> body = Map.of("model", "local-chat", "surprise_field", "x", "messages", List.of(user("hi " + EMAIL)));
        EngineException e = assertThrows(EngineException.class, () -> client.chat().completions().create(body));
        assertEquals("unsupported_field", e.code());
        assertEquals(400, e.status());
        assertTrue(relay.received().isEmpty());
    }

    @Test
    void anUnknownKeyIs401WithCodeAndRequestId() throws Exception {
        RelayClient bad = RelayClient.builder().gatewayUrl(relay.url).apiKey("svc_" + "a".repeat(52)).retries(0)
                .configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
        AuthenticationException e = assertThrows(AuthenticationException.class,
                () -> bad.chat().completions().create(Map.of("model", "local-chat", "messages", List.of(user(PROMPT)))));
        assertEquals(401, e.status());
        assertNotNull(e.code());
        assertNotNull(e.requestId());
        assertTrue(relay.received().isEmpty());
    }

    @Test
    void theFakeProviderIsNotAGatewayAndGetsNothing() throws Exception {
        RelayClient wrong = RelayClient.builder().gatewayUrl(relay.providerUrl).apiKey("svc_" + "a".repeat(52)).retries(0)
                .configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
        assertThrows(GatewayIdentityException.class, () -> wrong.chat().completions().create(Map.of("model", "m", "messages", List.of(user(PROMPT)))));
        assertFalse(relay.received().toString().contains(EMAIL));
    }

    @Test
    void aRefusalAfterTheKeyWasAcceptedCarriesASignedFailedReceiptAndNothingIsForwarded() throws Exception {
        RelayClient unfunded = RelayClient.builder().gatewayUrl(relay.url).apiKey(relay.fundedKey("0")[0]).retries(0)
                .configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
        java.util.List<JsonNode> failed = new java.util.ArrayList<>();
        for (Object[] c : new Object[][] {{"local-chat", 402, "insufficient_balance", InsufficientBalanceException.class},
                {"no-such-model", 404, "model_not_found", NotFoundException.class}}) {
            ApiException e = assertThrows(ApiException.class,
                    () -> unfunded.chat().completions().create(Map.of("model", c[0], "messages", List.of(user("Mail " + EMAIL)))));
            assertEquals(c[3], e.getClass());
            assertEquals(c[1], e.status());
            assertEquals(c[2], e.code());
            JsonNode r = e.failedReceipt();
            assertNotNull(r, "X-Service-Receipt-Failed decoded");
            assertEquals("failed", r.get("outcome").asText());
            assertEquals(e.status(), r.get("status").asInt());
            assertEquals(e.code(), r.get("error_code").asText());
            assertEquals(e.requestId(), r.at("/extensions/request_id").asText());
            assertTrue(unfunded.verifyReceipt(r).valid(), String.valueOf(unfunded.verifyReceipt(r)));
            ObjectNode changed = r.deepCopy();
            changed.put("status", 200);
            assertFalse(unfunded.verifyReceipt(changed).valid(), "a changed failed receipt does not verify");
            failed.add(r);
        }
        JsonNode chain = unfunded.verifyReceiptChain(failed);
        assertTrue(chain.get("valid").asBoolean(), "the refusals are one chain: " + chain);
        assertTrue(relay.received().isEmpty(), "nothing forwarded");
    }
}
