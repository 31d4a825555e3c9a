package dev.privacyrelay.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.privacyrelay.CallOptions;
import dev.privacyrelay.RelayClient;
import dev.privacyrelay.RelayResponse;
import dev.privacyrelay.Verification;
import dev.privacyrelay.WebhookDeduper;
import dev.privacyrelay.Webhooks;
import dev.privacyrelay.errors.AuthenticationException;
import dev.privacyrelay.errors.ConfigurationException;
import dev.privacyrelay.errors.InvalidRequestException;
import dev.privacyrelay.errors.NotFoundException;
import dev.privacyrelay.errors.WebhookVerificationException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The REST capability set against a real gateway, and a webhook the gateway delivers, verified here. */
class RestEndToEndTest {
    static final List<String> ABILITIES = List.of("ability:keys.read", "ability:keys.write", "ability:billing.read",
            "ability:billing.write", "webhooks.manage", "webhooks.read");

    TestGateway relay;
    RelayClient client;
    String apiKey;
    String prefix;

    @BeforeEach
    void setUp() throws Exception {
        relay = TestGateway.shared();
        String[] key = relay.fundedKey();
        apiKey = key[0];
        prefix = key[1];
        client = build(apiKey, relay.portalToken(prefix, ABILITIES));
    }

    RelayClient build(String key, String portal) throws Exception {
        return RelayClient.builder().gatewayUrl(relay.url).apiKey(key).portalToken(portal).nameModel("off").retries(0)
                .configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
    }

    static Map<String, Object> hi(String text) {
        return Map.of("model", "local-chat", "messages", List.of(Map.of("role", "user", "content", text)));
    }

    @Test
    void selfKeysBillingReceiptsAndTheTransparencyLog() {
        assertEquals(prefix, client.rest().self().key().get("key_prefix").asText());
        assertNotNull(client.rest().self().balance().get("balance_usd"));
        JsonNode mine = null;
        for (JsonNode k : client.rest().keys().list().get("keys")) if (prefix.equals(k.path("key_prefix").asText())) mine = k;
        assertNotNull(mine);
        assertEquals(mine.get("permissions"), client.rest().keys().scopes(mine.get("id").asText()).get("permissions"));
        assertNull(client.rest().keys().scopes("key_does_not_exist"));
        RelayResponse answer = client.chat().completions().create(hi("hi"));
        assertTrue(client.rest().receipts().verify(answer.receipt()).valid());
        String jti = answer.receipt().get("jti").asText();
        JsonNode stored = client.rest().receipts().get(jti);
        assertTrue(stored.toString().contains(jti));
        assertTrue(client.rest().receipts().list(Map.of("limit", 10)).toString().contains(jti));
        assertTrue(client.rest().receipts().signedTreeHead().get("tree_size").asLong() >= 1);
        Verification included = client.rest().receipts().verifyInclusionProof(client.rest().receipts().inclusionProof(jti), answer.receipt());
        assertTrue(included.valid(), String.valueOf(included));
    }

    @Test
    void theLogAKeptTreeHeadSawIsAPrefixOfTheLaterLog() {
        client.chat().completions().create(hi("first"));
        JsonNode kept = client.rest().receipts().signedTreeHead();
        client.chat().completions().create(hi("again"));
        JsonNode proof = client.rest().receipts().consistencyProof(kept.get("tree_size").asLong(), null);
        assertEquals(kept.get("tree_size").asLong(), proof.get("first").asLong());
        Verification v = client.rest().receipts().verifyConsistencyProof(proof, kept);
        assertTrue(v.valid(), String.valueOf(v));
        ObjectNode forked = kept.deepCopy();
        String root = kept.get("root_hash").asText();
        forked.put("root_hash", (root.charAt(0) == '0' ? "1" : "0") + root.substring(1));
        assertFalse(client.rest().receipts().verifyConsistencyProof(proof, forked).valid(), "a head the gateway did not sign");
    }

    @Test
    void keyLifecycleCreateReplayedUpdateRotateRevoke() throws Exception {
        CallOptions once = CallOptions.idempotencyKey("java-key-" + UUID.randomUUID());
        JsonNode created = client.rest().keys().create(Map.of("name", "java-sdk"), once);
        assertTrue(created.get("api_key").asText().startsWith("svc_"));
        assertEquals(created.get("api_key"), client.rest().keys().create(Map.of("name", "java-sdk"), once).get("api_key"), "replayed, not applied twice");
        String id = created.get("id").asText();
        assertEquals("java-sdk-2", client.rest().keys().update(id, Map.of("name", "java-sdk-2")).get("name").asText());
        JsonNode rotated = client.rest().keys().rotate(id);
        assertEquals(id, rotated.get("replaces").asText());
        assertNotEquals(created.get("api_key"), rotated.get("api_key"));
        assertEquals("revoked", client.rest().keys().revoke(id).get("status").asText());
        RelayClient revoked = build(created.get("api_key").asText(), null);
        assertEquals(401, assertThrows(AuthenticationException.class, () -> revoked.rest().self().key()).status());
        assertEquals(rotated.get("key_prefix"), build(rotated.get("api_key").asText(), null).rest().self().key().get("key_prefix"));
    }

    @Test
    void receiptsVerifiedOnlineAndTheCountersignatureBindsTheAttestation() {
        RelayResponse answer = client.chat().completions().create(hi("hi"));
        assertTrue(client.rest().receipts().verifyOnline(answer.receipt()).valid());
        ObjectNode changed = answer.receipt().deepCopy();
        changed.put("model", "other");
        assertFalse(client.rest().receipts().verifyOnline(changed).valid());
        assertTrue(client.verifyCountersignature(answer.countersignature(), answer.attestation()).valid());
        RelayResponse other = client.chat().completions().create(hi("another"));
        assertFalse(client.verifyCountersignature(answer.countersignature(), other.attestation()).valid(), "bound to its own call");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("attestation", answer.attestation());
        body.put("provider", "local");
        body.put("model", "local-chat");
        body.put("hash_upstream_request", answer.receipt().get("hash_upstream_request").asText());
        body.put("hash_upstream_response", answer.receipt().get("hash_upstream_response").asText());
        JsonNode signed = client.rest().receipts().countersign(body);
        assertEquals("v3-countersignature", signed.get("v").asText());
        assertTrue(client.verifyReceipt(signed).valid());
    }

    @Test
    void billingTopUpCheckoutLedgerUsageAndABadLicence() {
        BigDecimal before = new BigDecimal(client.rest().billing().balance().get("balance_usd").asText());
        JsonNode checkout = client.rest().billing().topUp("5", CallOptions.NONE);
        assertEquals("pending", checkout.get("status").asText());
        assertTrue(client.rest().billing().completeDevCheckout(checkout.get("checkout_id").asText()).get("credited").asBoolean());
        assertEquals(0, before.add(new BigDecimal(5)).compareTo(new BigDecimal(client.rest().billing().balance().get("balance_usd").asText())));
        assertTrue(client.rest().billing().ledger(null).toString().contains("5.000000"));
        client.chat().completions().create(hi("hi"));
        assertTrue(client.rest().billing().usage(null).get("summary").isArray());
        assertTrue(client.rest().self().usage(null).get("summary").isArray());
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> client.rest().billing().redeemLicence("NOT-A-LICENCE"));
        assertEquals(400, e.status());
        assertEquals("invalid_licence", e.code());
    }

    @Test
    void selfServiceAndDemoKeys() throws Exception {
        JsonNode key = client.rest().selfServiceKey(null, CallOptions.idempotencyKey("java-ss-" + UUID.randomUUID()));
        assertTrue(key.get("api_key").asText().startsWith("svc_"));
        JsonNode demo = client.rest().demoKey();
        assertEquals("demo", demo.get("tier").asText());
        assertTrue(build(demo.get("api_key").asText(), null).models().list().get("data").isArray());
    }

    @Test
    void portalRoutesNeedAPortalTokenAndABadOneIs401() throws Exception {
        RelayClient noPortal = build(apiKey, null);
        assertThrows(ConfigurationException.class, () -> noPortal.rest().keys().list());
        RelayClient bad = build(apiKey, "spt_" + "a".repeat(52));
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> bad.rest().billing().balance());
        assertEquals(401, e.status());
        assertNotNull(e.requestId());
    }

    @Test
    void aWebhookEndpointLifecycleAndDeliveryReplay() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort(); // nothing listens after this: the delivery fails and waits
        }
        JsonNode endpoint = client.rest().webhooks().createEndpoint("http://127.0.0.1:" + closed + "/hooks", List.of("webhook.test"));
        String id = endpoint.get("id").asText();
        assertTrue(client.rest().webhooks().listEndpoints().toString().contains(id));
        assertFalse(client.rest().webhooks().getEndpoint(id).has("secret"), "the secret is shown at creation and rotation only");
        assertEquals("webhook.*", client.rest().webhooks().updateEndpoint(id, Map.of("events", List.of("webhook.*"))).get("events").get(0).asText());
        assertEquals(400, assertThrows(InvalidRequestException.class, () -> client.rest().webhooks().updateEndpoint(id, Map.of("events", List.of("no.such_event")))).status());
        assertNotEquals(endpoint.get("secret"), client.rest().webhooks().rotateSecret(id).get("secret"));
        JsonNode delivery = client.rest().webhooks().testEndpoint(id);
        String deliveryId = delivery.get("id").asText();
        assertEquals("webhook.test", client.rest().webhooks().getDelivery(deliveryId).get("event").asText());
        assertEquals(deliveryId, client.rest().webhooks().replayDelivery(deliveryId).get("replay_of").asText());
        assertEquals("active", client.rest().webhooks().resumeEndpoint(id).get("status").asText());
        client.rest().webhooks().deleteEndpoint(id);
        assertEquals(404, assertThrows(NotFoundException.class, () -> client.rest().webhooks().getEndpoint(id)).status());
    }

    record Delivery(byte[] body, Map<String, String> headers) {}

    @Test
    void aWebhookTheGatewayDeliversIsVerifiedHereAndDeduplicated() throws Exception {
        BlockingQueue<Delivery> got = new ArrayBlockingQueue<>(4);
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/hooks", ex -> {
            byte[] body = ex.getRequestBody().readAllBytes();
            Map<String, String> headers = new LinkedHashMap<>();
            ex.getRequestHeaders().forEach((k, v) -> headers.put(k, v.get(0)));
            ex.sendResponseHeaders(200, -1);
            ex.close();
            got.offer(new Delivery(body, headers));
        });
        receiver.start();
        try {
            JsonNode endpoint = client.rest().webhooks().createEndpoint("http://127.0.0.1:" + receiver.getAddress().getPort() + "/hooks", List.of("webhook.test"));
            String secret = endpoint.get("secret").asText();
            client.rest().webhooks().testEndpoint(endpoint.get("id").asText());
            Delivery d = got.poll(60, TimeUnit.SECONDS);
            assertNotNull(d, "the gateway delivered the test event");
            Webhooks.verify(d.body(), d.headers(), secret); // authentic and fresh: returns
            byte[] forged = new String(d.body(), StandardCharsets.UTF_8).replace("webhook.test", "webhook.tesT").getBytes(StandardCharsets.UTF_8);
            assertEquals("bad_signature", assertThrows(WebhookVerificationException.class, () -> Webhooks.verify(forged, d.headers(), secret)).code());
            assertEquals("stale_timestamp", assertThrows(WebhookVerificationException.class,
                    () -> Webhooks.verify(d.body(), d.headers(), secret, Duration.ofSeconds(300), Instant.now().plusSeconds(3600))).code());
            assertEquals("bad_signature", assertThrows(WebhookVerificationException.class, () -> Webhooks.verify(d.body(), d.headers(), "whsec_wrong")).code());
            String eventId = Webhooks.eventId(d.headers());
            assertNotNull(eventId);
            WebhookDeduper dedupe = new WebhookDeduper();
            assertTrue(dedupe.firstTime(eventId));
            assertFalse(dedupe.firstTime(eventId));
            assertTrue(client.rest().webhooks().listDeliveries(null).toString().contains("webhook.test"));
        } finally {
            receiver.stop(0);
        }
    }

    @Test
    void aReceiptSignedAfterAGatewayKeyRotationVerifiesAfterOneJwksRefetch() throws Exception {
        client.jwks();
        String admin = relay.portalToken(prefix, List.of("ability:admin"));
        JsonNode rotation = relay.http("POST", relay.url + "/api/admin/receipts/keys/rotate", Map.of(), Map.of("authorization", "Bearer " + admin));
        String kid = rotation.get("kid").asText();
        assertFalse(client.jwks().toString().contains(kid));
        RelayResponse answer = client.chat().completions().create(hi("after the rotation"));
        assertEquals(kid, answer.receipt().get("kid").asText());
        assertEquals(Boolean.TRUE, answer.receiptVerified(), String.valueOf(answer.receiptVerification()));
        assertTrue(client.jwks().toString().contains(kid));
    }
}
