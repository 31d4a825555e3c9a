package dev.privacyrelay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privacyrelay.engine.EngineException;
import dev.privacyrelay.engine.EngineUnavailableException;
import dev.privacyrelay.errors.AuthenticationException;
import dev.privacyrelay.errors.ConfigurationException;
import dev.privacyrelay.errors.GatewayIdentityException;
import dev.privacyrelay.errors.RateLimitException;
import dev.privacyrelay.errors.RelayTimeoutException;
import dev.privacyrelay.errors.ServerException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The relay client against a stand-in gateway: what leaves the device, retries, errors, the gateway lock, bad input. */
class RelayClientTest {
    static final String KEY = "svc_" + "a".repeat(52);
    static final String EMAIL = "jane.doe@example.com";

    StubGateway gateway;
    Path configDir;
    final List<Duration> waits = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        gateway = new StubGateway();
        configDir = Files.createTempDirectory("pr-java-device-");
    }

    @AfterEach
    void stop() {
        gateway.close();
    }

    RelayClient.Builder client() {
        return RelayClient.builder().gatewayUrl(gateway.url()).apiKey(KEY).configDir(configDir.toString()).nameModel("off")
                .sleeper(waits::add);
    }

    static Map<String, Object> chat(String text) {
        return Map.of("model", "local-chat", "messages", List.of(Map.of("role", "user", "content", text)));
    }

    /** Echoes the (tokenised) user message back, as a provider that repeats the prompt would. */
    void echoChat() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            ObjectNode answer = StubGateway.JSON.createObjectNode().put("id", "chatcmpl-1").put("object", "chat.completion");
            answer.putArray("choices").addObject().put("index", 0).put("finish_reason", "stop").putObject("message")
                    .put("role", "assistant").put("content", "You said: " + StubGateway.firstContent(body));
            StubGateway.answer(ex, 200, answer.toString());
        });
    }

    @Test
    void aChatCompletionLeavesTokenisedAndAttestedAndComesBackRestored() {
        echoChat();
        RelayResponse answer = client().build().chat().completions().create(chat("Write to " + EMAIL + " today"));
        assertEquals("You said: Write to " + EMAIL + " today", answer.text());
        assertEquals("req_stub_200", answer.requestId());
        StubGateway.Seen sent = gateway.calls().get(0);
        assertFalse(sent.body().contains(EMAIL), "no original leaves the device");
        assertTrue(sent.body().contains("<EMAIL_"), sent.body());
        assertEquals(answer.tokenisedRequest(), sent.body(), "the attested bytes are the bytes sent");
        assertEquals("relay-java/0.1.0", sent.header("x-service-engine"));
        assertNotNull(sent.header("x-service-attestation"));
        assertEquals("Bearer " + KEY, sent.header("authorization"));
        assertTrue(sent.header("traceparent").matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01"), sent.header("traceparent"));
        assertTrue(sent.header("idempotency-key").matches("[0-9a-f-]{36}"));
        assertNull(answer.receipt());
        assertNull(answer.receiptVerified());
    }

    static void assertNull(Object o) {
        org.junit.jupiter.api.Assertions.assertNull(o);
    }

    @Test
    void theIdentityProbeIsAnsweredBeforeTheKeyIsSentAndOnlyOnce() {
        echoChat();
        RelayClient c = client().build();
        c.chat().completions().create(chat("one"));
        c.chat().completions().create(chat("two"));
        assertEquals(GatewayIdentity.PROBE_PATH, gateway.seen.get(0).path());
        assertNull(gateway.seen.get(0).header("authorization"));
        assertEquals(1, gateway.seen.stream().filter(s -> s.path().equals(GatewayIdentity.PROBE_PATH)).count());
    }

    @Test
    void a429IsRetriedAfterRetryAfterWithTheSameIdempotencyKeyAndBytes() {
        int[] calls = {0};
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            if (calls[0]++ == 0) {
                ex.getResponseHeaders().add("retry-after", "3");
                StubGateway.answer(ex, 429, "{\"error\":{\"code\":\"rate_limited\",\"message\":\"slow down\"}}");
            } else {
                StubGateway.answer(ex, 200, "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"}}]}");
            }
        });
        RelayResponse answer = client().build().chat().completions().create(chat("Mail " + EMAIL));
        assertEquals("ok", answer.text());
        assertEquals(List.of(Duration.ofSeconds(3)), waits, "waited what Retry-After asked");
        List<StubGateway.Seen> sent = gateway.calls();
        assertEquals(2, sent.size());
        assertEquals(sent.get(0).header("idempotency-key"), sent.get(1).header("idempotency-key"));
        assertEquals(sent.get(0).body(), sent.get(1).body());
    }

    @Test
    void aRetryAfterLongerThanTheLimitIsThrownAtOnceWithItsWait() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            ex.getResponseHeaders().add("retry-after", "3600");
            StubGateway.answer(ex, 429, "{\"error\":{\"code\":\"quota_exceeded\",\"message\":\"tomorrow\"}}");
        });
        RateLimitException e = assertThrows(RateLimitException.class, () -> client().build().chat().completions().create(chat("hi")));
        assertEquals(429, e.status());
        assertEquals("quota_exceeded", e.code());
        assertEquals(Duration.ofHours(1), e.retryAfter().orElseThrow());
        assertEquals(1, gateway.calls().size());
        assertTrue(waits.isEmpty());
    }

    @Test
    void aServerErrorIsRetriedThenThrownWithStatusCodeAndRequestId() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> StubGateway.answer(ex, 502, "{\"error\":{\"code\":\"upstream_error\",\"message\":\"provider down\"}}"));
        ServerException e = assertThrows(ServerException.class, () -> client().retries(2).build().chat().completions().create(chat("hi")));
        assertEquals(502, e.status());
        assertEquals("upstream_error", e.code());
        assertEquals("req_stub_502", e.requestId());
        assertEquals(3, gateway.calls().size());
        assertEquals(1, gateway.calls().stream().map(s -> s.header("idempotency-key")).distinct().count());
    }

    @Test
    void a401IsNotRetriedAndIsAnAuthenticationException() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> StubGateway.answer(ex, 401, "{\"error\":{\"code\":\"invalid_key\",\"message\":\"unknown key\"}}"));
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> client().build().chat().completions().create(chat("hi")));
        assertEquals("invalid_key", e.code());
        assertEquals(1, gateway.calls().size());
    }

    @Test
    void anAttemptLongerThanTheTimeoutIsATimeout() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            StubGateway.answer(ex, 200, "{}");
        });
        try {
            RelayTimeoutException e = assertThrows(RelayTimeoutException.class,
                    () -> client().retries(0).timeout(Duration.ofMillis(300)).build().chat().completions().create(chat("hi")));
            assertEquals("timeout", e.code());
        } finally {
            release.countDown();
        }
    }

    @Test
    void myOwnIdempotencyKeyAndTraceparentAreSentAndGiveTheSameBytes() {
        echoChat();
        RelayClient c = client().build();
        String tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        CallOptions o = CallOptions.idempotencyKey("my-key-1").withTraceparent(tp);
        c.chat().completions().create(chat("Mail " + EMAIL), o);
        c.chat().completions().create(chat("Mail " + EMAIL), o);
        List<StubGateway.Seen> sent = gateway.calls();
        assertEquals("my-key-1", sent.get(0).header("idempotency-key"));
        assertEquals(tp, sent.get(0).header("traceparent"));
        assertEquals(sent.get(0).body(), sent.get(1).body(), "aliases derive from the idempotency key: a retry is the same request");
    }

    // ---- the gateway lock and bad input: a typed error, nothing sent ---------------------------------------------

    @Test
    void aPlainHttpUrlToANonLoopbackHostIsRefusedAtConstruction() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> RelayClient.builder().gatewayUrl("http://gateway.example.com").apiKey(KEY).build());
        assertEquals("configuration_error", e.code());
        assertTrue(e.getMessage().contains("https"));
        assertThrows(ConfigurationException.class, () -> RelayClient.builder().gatewayUrl("ftp://127.0.0.1").apiKey(KEY).build());
        assertThrows(ConfigurationException.class, () -> RelayClient.builder().gatewayUrl("http://localhost.example.com").apiKey(KEY).build());
        assertThrows(ConfigurationException.class, () -> RelayClient.builder().gatewayUrl("https://user:pw@gateway.example.com").apiKey(KEY).build());
        assertEquals("https://gateway.example.com", RelayClient.builder().gatewayUrl("https://gateway.example.com/").apiKey(KEY).build().gatewayUrl());
        assertEquals("http://[::1]:8080", RelayClient.builder().gatewayUrl("http://[::1]:8080").apiKey(KEY).build().gatewayUrl());
        assertEquals("http://localhost:8080", RelayClient.builder().gatewayUrl("http://localhost:8080").apiKey(KEY).build().gatewayUrl());
    }

    @Test
    void aKeyFileReadableByOthersIsRefusedAndAPrivateOneIsRead() throws Exception {
        Path open = StubGateway.keyFile(KEY, "rw-r--r--");
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> RelayClient.builder().gatewayUrl(gateway.url()).apiKeyFile(open.toString()).build());
        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
        assertFalse(e.getMessage().contains(KEY), "the key is never in a message");
        Path closed = StubGateway.keyFile(KEY, "rw-------");
        echoChat();
        RelayClient.builder().gatewayUrl(gateway.url()).apiKeyFile(closed.toString()).configDir(configDir.toString()).build()
                .chat().completions().create(chat("hi"));
        assertEquals("Bearer " + KEY, gateway.calls().get(0).header("authorization"));
        assertTrue(gateway.seen.size() == 2, "nothing was sent for the refused file");
    }

    @Test
    void aMissingEngineLibraryIsAClearErrorAtConstruction() {
        EngineUnavailableException e = assertThrows(EngineUnavailableException.class,
                () -> client().engineLibrary("/nonexistent/libprivacy_relay.so").build());
        assertEquals("engine_unavailable", e.code());
        assertTrue(e.getMessage().contains("build-ffi.sh"));
        assertTrue(gateway.seen.isEmpty());
    }

    @Test
    void anEngineLibraryOfAnotherAbiVersionIsAClearErrorAtConstruction() throws Exception {
        String lib = dev.privacyrelay.engine.OtherAbiLibrary.build().toString();
        EngineUnavailableException e = assertThrows(EngineUnavailableException.class, () -> client().engineLibrary(lib).build());
        assertTrue(e.getMessage().contains("C ABI version"), e.getMessage());
        assertTrue(gateway.seen.isEmpty());
    }

    @Test
    void aUrlThatIsNotAGatewayGetsNoKeyAndNoBody() {
        gateway.on(GatewayIdentity.PROBE_PATH, (ex, body) -> StubGateway.answer(ex, 404, "not here"));
        GatewayIdentityException e = assertThrows(GatewayIdentityException.class, () -> client().build().chat().completions().create(chat("Mail " + EMAIL)));
        assertEquals("gateway_identity_failed", e.code());
        assertTrue(gateway.calls().isEmpty());
        assertNull(gateway.seen.get(0).header("authorization"));
    }

    @Test
    void aProbeAnsweringAPrivateKeyIsNotAGateway() {
        gateway.on(GatewayIdentity.PROBE_PATH, (ex, body) -> StubGateway.answer(ex, 200,
                "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"a\",\"y\":\"b\",\"d\":\"secret\"}]}"));
        assertThrows(GatewayIdentityException.class, () -> client().build().models().list());
        assertTrue(gateway.calls().isEmpty());
    }

    @Test
    void aFieldTheEgressPolicyRefusesIsATypedErrorAndNothingIsSent() {
        echoChat();
        Map<String, Object> body = Map.of("model", "local-chat", "surprise_field", EMAIL, "messages", List.of(Map.of("role", "user", "content", "hi")));
        EngineException e = assertThrows(EngineException.class, () -> client().build().chat().completions().create(body));
        assertEquals("unsupported_field", e.code());
        assertEquals(400, e.status());
        assertEquals("/surprise_field", e.details().get("path").asText());
        assertTrue(gateway.seen.isEmpty(), "not even the probe: refused on the device");
    }

    @Test
    void anImageIsRefused415UnlessMediaPolicyPass() {
        Map<String, Object> image = Map.of("model", "local-chat", "messages", List.of(Map.of("role", "user", "content",
                List.of(Map.of("type", "image_url", "image_url", Map.of("url", "data:image/png;base64,AAAA"))))));
        EngineException e = assertThrows(EngineException.class, () -> client().build().chat().completions().create(image));
        assertEquals(415, e.status());
        assertEquals("unsupported_content", e.code());
        assertTrue(gateway.seen.isEmpty());
    }

    @Test
    void noKeyIsAConfigurationErrorBeforeAnythingIsSent() {
        RelayClient c = RelayClient.builder().gatewayUrl(gateway.url()).configDir(configDir.toString()).build();
        assertThrows(ConfigurationException.class, () -> c.chat().completions().create(chat("hi")));
        assertThrows(ConfigurationException.class, () -> c.rest().keys().list());
        assertTrue(gateway.seen.isEmpty());
    }

    @Test
    void theStreamFlagOnCreateIsRefusedWithTheMethodToUse() {
        Map<String, Object> body = Map.of("model", "local-chat", "stream", true, "messages", List.of(Map.of("role", "user", "content", "hi")));
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> client().build().chat().completions().create(body));
        assertTrue(e.getMessage().contains("createStreaming"));
    }

    @Test
    void anEmbeddingsAnswerWithAnAliasIsRestoredInsideItsJsonString() {
        gateway.on("/api/v1/embeddings", (ex, body) -> {
            JsonNode input = StubGateway.JSON.readTree(body).get("input");
            StubGateway.answer(ex, 200, "{\"object\":\"list\",\"data\":[],\"echo\":" + input + "}");
        });
        RelayResponse r = client().build().embeddings().create(Map.of("model", "local-embed", "input", "He said \"hi\" to " + EMAIL));
        assertEquals("He said \"hi\" to " + EMAIL, r.body().get("echo").asText());
        assertFalse(gateway.calls().get(0).body().contains(EMAIL));
    }

    @Test
    void toolCallArgumentsAreRestoredInsideTheirJsonTextAndStillParse() throws Exception {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            String content = StubGateway.firstContent(body);
            String alias = content.substring(content.indexOf('<'), content.indexOf('>') + 1);
            ObjectNode answer = StubGateway.JSON.createObjectNode();
            ObjectNode message = answer.putArray("choices").addObject().put("index", 0).putObject("message").put("role", "assistant");
            message.putNull("content");
            message.putArray("tool_calls").addObject().put("id", "call_1").put("type", "function").putObject("function")
                    .put("name", "send_mail").put("arguments", "{\"to\":\"" + alias + "\"}");
            StubGateway.answer(ex, 200, answer.toString());
        });
        RelayResponse r = client().build().chat().completions().create(chat("Mail " + EMAIL));
        String args = r.body().at("/choices/0/message/tool_calls/0/function/arguments").asText();
        assertEquals(EMAIL, StubGateway.JSON.readTree(args).get("to").asText());
    }
}
