package dev.privacyrelay.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The vector groups VectorsTest does not run: transparency consistency proofs, receipt chain exports, alias tags and
 * is_alias, the egress policy compiled into the library; and a check that every file of sdks/vectors is read here.
 */
class VectorsProofsTest {
    private final Engine engine = Engine.shared();

    @Test
    void transparencyConsistencyProofsAnswerExactlyTheExpectedVerdict() {
        JsonNode t = Vectors.load("transparency");
        assertFalse(t.get("consistency").isEmpty());
        for (JsonNode c : t.get("consistency")) {
            Map<String, Object> options = c.has("new_head") ? Map.of("new_head", Vectors.JSON.convertValue(c.get("new_head"), Object.class)) : null;
            assertEquals(c.get("expected"), engine.verifyConsistencyProof(c.get("proof"), c.get("old_head"), t.get("jwks"), options), c.get("name").asText());
        }
    }

    @Test
    void receiptChainExportsJsonJsonLinesAndArrays() {
        JsonNode r = Vectors.load("receipts");
        assertFalse(r.get("chain_exports").isEmpty());
        for (JsonNode c : r.get("chain_exports")) {
            String input = c.get("input").isTextual() ? c.get("input").asText() : c.get("input").toString(); // JSON text or JSON Lines
            Map<String, Object> options = new LinkedHashMap<>();
            options.put("now_seconds", c.get("now_seconds").asLong());
            options.put("allow_gaps", c.path("allow_gaps").asBoolean(false));
            JsonNode got = engine.verifyChainExport(input, r.get("jwks"), options);
            // Every member the vector names, compared exactly (the engine adds first_seq, last_seq, break.result).
            assertEquals(c.get("expected"), project(got, c.get("expected")), c.get("name").asText() + ": " + got);
        }
    }

    @Test
    void aliasTagsPerRequestAndStableAndIsAlias() {
        JsonNode a = Vectors.load("aliases");
        for (String group : List.of("per_request", "stable")) {
            String kind = group.equals("stable") ? "stable" : "request";
            String secret = a.get(group.equals("stable") ? "stable_secret_hex" : "request_secret_hex").asText();
            assertFalse(a.get("tags").get(group).isEmpty());
            for (JsonNode c : a.get("tags").get(group)) {
                JsonNode got = engine.aliasTag(kind, secret, c.get("message").asText().getBytes(StandardCharsets.UTF_8));
                assertEquals(c.get("hmac_sha256").asText(), got.get("hmac_sha256").asText(), kind + " " + c.get("message"));
                assertEquals(c.get("tag").asText(), got.get("tag").asText(), kind + " " + c.get("message"));
            }
        }
        for (JsonNode c : a.get("is_alias")) assertEquals(c.get("alias").asBoolean(), engine.isAlias(c.get("text").asText()), c.get("text").asText());
    }

    @Test
    void theEgressPolicyCompiledInIsTheVectorFileByteForByte() throws IOException {
        byte[] raw = Files.readAllBytes(dir().resolve("egress-policy.json"));
        JsonNode policy = engine.info().get("egress_policy");
        assertEquals(engine.hash("sha256", raw), policy.get("sha256").asText());
        assertEquals(Vectors.JSON.readTree(raw).get("version").asInt(), policy.get("version").asInt());
    }

    /**
     * The builtin name model compiled into the engine is name-model.json's lexicon: as many distinct given names and
     * surnames as its faker, compromise and frequent lists hold, and faker's place and calendar words.
     */
    @Test
    void theEnginesNameListsAreTheNameModelsLexicon() {
        JsonNode lexicon = Vectors.load("name-model").get("lexicon");
        JsonNode gazetteer = engine.info().get("gazetteer");
        assertEquals(distinct(lexicon, "given", "faker", "compromise", "frequent"), gazetteer.get("given_names").asInt());
        assertEquals(distinct(lexicon, "surnames", "faker", "compromise", "frequent"), gazetteer.get("surnames").asInt());
        assertEquals(lexicon.get("faker").get("places").size(), gazetteer.get("place_words").asInt());
        assertEquals(lexicon.get("faker").get("calendar").size(), gazetteer.get("calendar_words").asInt());
    }

    private static int distinct(JsonNode lexicon, String key, String... sources) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String source : sources) lexicon.get(source).get(key).forEach(w -> seen.add(w.asText()));
        return seen.size();
    }

    @Test
    void everyVectorFileIsReadByTheseTests() throws IOException {
        List<String> found;
        try (Stream<Path> files = Files.list(dir())) {
            found = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json")).sorted().toList();
        }
        assertEquals(List.of("aliases.json", "attestation.json", "egress-policy-cases.json", "egress-policy.json", "jcs.json", "merkle-proofs.json",
                "name-model.json", "receipts.json", "sha256.json", "tokeniser-large.json", "tokeniser-names.json", "tokeniser-spans.json", "transparency.json", "webhooks.json"), found,
                "a new vector file needs a test here");
    }

    private static Path dir() {
        return Path.of(System.getProperty("privacyrelay.vectors", "../vectors"));
    }

    /** Keeps of {@code got} only what {@code want} names: the members of want's objects, element by element in arrays. */
    static JsonNode project(JsonNode got, JsonNode want) {
        if (want.isObject() && got.isObject()) {
            ObjectNode out = Vectors.JSON.createObjectNode();
            want.fieldNames().forEachRemaining(k -> {
                if (got.has(k)) out.set(k, project(got.get(k), want.get(k)));
            });
            return out;
        }
        if (want.isArray() && got.isArray() && want.size() == got.size()) {
            ArrayNode out = Vectors.JSON.createArrayNode();
            for (int i = 0; i < got.size(); i++) out.add(project(got.get(i), want.get(i)));
            return out;
        }
        if (want.isNumber() && got.isNumber() && want.asDouble() == got.asDouble()) return want; // 3.0 and 3: one number
        return got;
    }
}
