package dev.privacyrelay.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every file of sdks/vectors the C ABI can run, through this binding, byte for byte: jcs, tokeniser-spans, aliases
 * (tokenise, tokenise_stable, streams), egress-policy-cases, receipts (cases, chains), transparency (inclusion
 * proofs), webhooks (verify, sign), attestation (build, offline verdicts).
 */
class VectorsTest {
    private final Engine engine = Engine.shared();

    @Test
    void jcsCanonicalTextOfEveryCase() {
        for (JsonNode c : Vectors.load("jcs").get("cases")) {
            assertEquals(c.get("canonical").asText(), engine.canonicalize(c.get("input").asText()), c.get("name").asText());
        }
    }

    @Test
    void tokeniserSpansOfTheMultilingualSet() {
        assertSpans(Vectors.load("tokeniser-spans"));
    }

    /** The same with the built-in name model on (the portable name model, sdks/vectors/name-model.json), exact. */
    @Test
    void tokeniserNamesWithTheBuiltinNameModel() {
        JsonNode v = Vectors.load("tokeniser-names");
        assertEquals("builtin", v.get("engine_settings").get("names").asText());
        assertSpans(v);
    }

    /**
     * tokeniser-large.json: a short unit repeated up to millions of times, then a real value. The value after the run
     * is found (PCRE2's limit once ended the search there) and the engine answers instead of failing.
     */
    @Test
    void tokeniserSpansAfterPathologicalLongRuns() {
        JsonNode v = Vectors.load("tokeniser-large");
        Map<String, Object> options = Vectors.options(v.get("engine_settings"));
        for (JsonNode c : v.get("cases")) {
            String text = c.get("unit").asText().repeat(c.get("times").asInt()) + c.get("tail").asText();
            List<JsonNode> got = new ArrayList<>();
            for (JsonNode s : engine.detectSpans(text, options).get("spans")) {
                ObjectNode kept = Vectors.JSON.createObjectNode();
                for (String k : List.of("start", "end", "type", "value")) kept.set(k, s.get(k));
                got.add(kept);
            }
            List<JsonNode> want = new ArrayList<>();
            c.get("spans").forEach(want::add);
            assertEquals(want, got, c.get("name").asText());
        }
    }

    private void assertSpans(JsonNode v) {
        Map<String, Object> options = Vectors.options(v.get("engine_settings"));
        for (JsonNode c : v.get("cases")) {
            List<JsonNode> got = new ArrayList<>();
            for (JsonNode s : engine.detectSpans(c.get("text").asText(), options).get("spans")) {
                ObjectNode kept = Vectors.JSON.createObjectNode();
                for (String k : List.of("start", "end", "type", "value")) kept.set(k, s.get(k));
                got.add(kept);
            }
            List<JsonNode> want = new ArrayList<>();
            c.get("spans").forEach(want::add);
            assertEquals(want, got, c.get("text").asText());
        }
    }

    @Test
    void aliasesTokeniseStableAndStreams() {
        JsonNode a = Vectors.load("aliases");
        for (JsonNode c : a.get("tokenise")) {
            JsonNode out = engine.tokeniseText(c.get("text").asText(), Map.of("names", "off", "secret_hex", a.get("request_secret_hex").asText()));
            assertEquals(c.get("output"), out.get("text"));
            assertEquals(c.get("map"), out.get("map"));
            assertEquals(c.get("detectors_fired"), out.get("detectors_fired"));
        }
        for (JsonNode c : a.get("tokenise_stable")) {
            JsonNode out = engine.tokeniseText(c.get("text").asText(), Map.of(
                    "names", "off", "secret_hex", a.get("request_secret_hex").asText(), "stable_alias_secret_hex", a.get("stable_secret_hex").asText()));
            assertEquals(c.get("output"), out.get("text"));
            assertEquals(c.get("map"), out.get("map"));
        }
        for (JsonNode c : a.get("streams")) {
            Map<String, String> map = Vectors.pairs(c.get("map"));
            try (StreamingDetokeniser d = engine.streamingDetokeniser(map)) {
                List<String> outputs = new ArrayList<>();
                StringBuilder joined = new StringBuilder();
                for (JsonNode chunk : c.get("chunks")) {
                    outputs.add(d.push(chunk.asText()));
                    joined.append(chunk.asText());
                }
                List<String> want = new ArrayList<>();
                c.get("outputs").forEach(o -> want.add(o.asText()));
                assertEquals(want, outputs, c.get("name").asText());
                assertEquals(c.get("flush").asText(), d.finish(), c.get("name").asText());
                assertEquals(c.get("joined").asText(), engine.detokenise(joined.toString(), map), c.get("name").asText());
            }
        }
    }

    @Test
    void egressPolicyCasesBytesMapPassthroughAndRefusals() {
        for (JsonNode c : Vectors.load("egress-policy-cases").get("cases")) {
            String name = c.get("name").asText();
            Map<String, Object> options = Vectors.options(c.get("options"));
            JsonNode expected = c.get("expected");
            if (expected.has("refusal")) {
                EngineException e = assertThrows(EngineException.class, () -> engine.tokeniseRequest(c.get("route").asText(), c.get("body"), options), name);
                JsonNode refusal = expected.get("refusal");
                assertEquals(refusal.get("code").asText(), e.code(), name);
                assertEquals(refusal.get("path").asText(), e.details().get("path").asText(), name);
                if (refusal.has("kind")) assertEquals(refusal.get("kind").asText(), e.details().get("kind").asText(), name);
                continue;
            }
            TokenisedRequest t = engine.tokeniseRequest(c.get("route").asText(), c.get("body"), options);
            assertEquals(expected.get("body_jcs").asText(), t.bodyText(), name);
            assertEquals(Vectors.pairs(expected.get("map")), t.aliases(), name);
            assertEquals(expected.get("passthrough"), t.passthrough(), name);
            Map<String, Integer> fired = new LinkedHashMap<>();
            expected.get("detectors_fired").fields().forEachRemaining(e -> fired.put(e.getKey(), e.getValue().asInt()));
            assertEquals(fired, t.detectorsFired(), name);
            for (JsonNode original : c.path("never_sent")) {
                assertEquals(-1, t.bodyText().indexOf(original.asText()), name + ": an original left the device");
            }
        }
    }

    @Test
    void receiptCasesAnswerExactlyTheExpectedVerdict() {
        JsonNode r = Vectors.load("receipts");
        for (JsonNode c : r.get("cases")) {
            Map<String, Object> options = new LinkedHashMap<>();
            options.put("now_seconds", c.get("now_seconds").asLong());
            for (String k : List.of("previous", "attestation")) if (c.has(k)) options.put(k, Vectors.JSON.convertValue(c.get(k), Object.class));
            String input = c.get("input").isTextual() ? c.get("input").asText() : c.get("input").toString();
            assertEquals(c.get("expected"), engine.verifyReceipt(input, r.get("jwks"), options), c.get("name").asText());
        }
    }

    @Test
    void receiptChainsValidVerifiedAndTheBreak() {
        JsonNode r = Vectors.load("receipts");
        for (JsonNode c : r.get("chains")) {
            Map<String, Object> options = new LinkedHashMap<>();
            options.put("now_seconds", c.get("now_seconds").asLong());
            if (c.path("allow_gaps").asBoolean(false)) options.put("allow_gaps", true);
            JsonNode got = engine.verifyChain(c.get("receipts"), r.get("jwks"), options);
            JsonNode want = c.get("expected");
            String name = c.get("name").asText();
            assertEquals(want.get("valid"), got.get("valid"), name);
            assertEquals(want.get("verified"), got.get("verified"), name);
            for (String k : List.of("index", "seq", "reason")) {
                assertEquals(want.path("break").path(k), got.path("break").path(k), name + " break." + k);
            }
        }
    }

    @Test
    void transparencyInclusionProofs() {
        JsonNode t = Vectors.load("transparency");
        for (JsonNode c : t.get("cases")) {
            Map<String, Object> options = c.has("receipt") ? Map.of("receipt", Vectors.JSON.convertValue(c.get("receipt"), Object.class)) : null;
            assertEquals(c.get("expected"), engine.verifyInclusionProof(c.get("proof"), c.get("sth"), t.get("jwks"), options), c.get("name").asText());
        }
    }

    @Test
    void webhookVerifyCasesAndSignedDeliveries() {
        JsonNode w = Vectors.load("webhooks");
        for (JsonNode c : w.get("verify")) {
            Map<String, Object> options = new LinkedHashMap<>();
            options.put("now_seconds", c.get("now_seconds").asLong());
            if (c.has("tolerance_seconds")) options.put("tolerance_seconds", c.get("tolerance_seconds").asLong());
            Map<String, String> headers = new LinkedHashMap<>();
            c.get("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
            JsonNode got = engine.verifyWebhook(c.get("body").asText().getBytes(StandardCharsets.UTF_8), headers, c.get("secret").asText(), options);
            assertEquals(c.get("expected").get("ok"), got.get("ok"), c.get("name").asText());
            if (c.get("expected").has("code")) assertEquals(c.get("expected").get("code"), got.get("code"), c.get("name").asText());
        }
        for (JsonNode c : w.get("sign")) {
            Map<String, String> headers = Map.of("X-Service-Signature", c.get("v1").asText());
            JsonNode got = engine.verifyWebhook(c.get("body").asText().getBytes(StandardCharsets.UTF_8), headers, w.get("secret").asText(), Map.of("now_seconds", c.get("timestamp").asLong()));
            assertEquals(true, got.get("ok").asBoolean(), "signed delivery verifies");
        }
    }

    private static byte[] hex(String h) {
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    @Test
    void sha256TextJsonBodiesMerkleLeavesAndNodes() {
        JsonNode v = Vectors.load("sha256");
        for (JsonNode c : v.get("text")) {
            assertEquals(c.get("sha256").asText(), engine.hash("sha256", c.get("text").asText().getBytes(StandardCharsets.UTF_8)), c.get("text").asText());
        }
        for (JsonNode c : v.get("json_body")) {
            assertEquals(c.get("sha256").asText(), engine.hash("json_body_sha256", c.get("body").asText().getBytes(StandardCharsets.UTF_8)), c.get("name").asText());
        }
        JsonNode m = v.get("merkle");
        assertEquals(m.get("empty_tree_root").asText(), engine.hash("sha256", new byte[0]));
        for (JsonNode c : m.get("leaf")) assertEquals(c.get("leaf_hash").asText(), engine.hash("merkle_leaf", hex(c.get("data_hex").asText())));
        for (JsonNode c : m.get("node")) assertEquals(c.get("node_hash").asText(), engine.hash("merkle_node", hex(c.get("left_hex").asText() + c.get("right_hex").asText())));
    }

    @Test
    void merkleProofsInclusionAndConsistency() {
        JsonNode m = Vectors.load("merkle-proofs");
        for (JsonNode c : m.get("inclusion")) assertEquals(c.get("valid"), engine.verifyMerkleProof("inclusion", c).get("valid"), c.get("name").asText());
        for (JsonNode c : m.get("consistency")) assertEquals(c.get("valid"), engine.verifyMerkleProof("consistency", c).get("valid"), c.get("name").asText());
    }

    @Test
    void webhookSignaturesAreSignedByteForByte() {
        JsonNode w = Vectors.load("webhooks");
        for (JsonNode c : w.get("sign")) {
            assertEquals(c.get("v1").asText(),
                    engine.signWebhook("v1", c.get("body").asText(), w.get("secret").asText(), Map.of("timestamp", c.get("timestamp").asLong())));
            assertEquals(c.get("v0").asText(), engine.signWebhook("v0", c.get("payload").toString(), w.get("secret").asText(), null));
        }
    }

    @Test
    void attestationBuildAndOfflineVerdicts() {
        JsonNode a = Vectors.load("attestation");
        for (JsonNode c : a.get("build")) {
            ObjectNode input = ((ObjectNode) c.get("input").deepCopy()).put("deterministic", true);
            assertEquals(c.get("header"), engine.buildAttestation(input, a.get("device_key").get("private_jwk")).get("header"), c.get("name").asText());
        }
        for (JsonNode c : a.get("verify")) {
            JsonNode got = engine.verifyReceipt(c.get("header").asText(), Vectors.JSON.createObjectNode().set("keys", Vectors.JSON.createArrayNode()), Map.of("now_seconds", c.get("now_seconds").asLong()));
            JsonNode offline = c.get("expected").get("offline");
            assertEquals(offline.get("valid"), got.get("valid"), c.get("name").asText());
            assertEquals(offline.path("reason"), got.path("reason"), c.get("name").asText());
        }
    }
}
