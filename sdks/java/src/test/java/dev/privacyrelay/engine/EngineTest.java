package dev.privacyrelay.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The binding's own behaviour: identity, typed refusals, bad input, a library that is missing or not the engine. */
class EngineTest {
    private final Engine engine = Engine.shared();

    @Test
    void theLoadedEngineIsTheSharedRustCoreOfThisAbi() {
        JsonNode info = engine.info();
        assertEquals("relay-rs", info.get("id").asText());
        assertEquals(Engine.ABI_VERSION, info.get("abi_version").asInt());
        assertEquals(64, info.get("sha256").asText().length());
    }

    @Test
    void aChatBodyLeavesWithAliasesAndComesBackWithTheOriginals() {
        JsonNode body = Vectors.JSON.createObjectNode().put("model", "local-chat")
                .set("messages", Vectors.JSON.createArrayNode().add(Vectors.JSON.createObjectNode().put("role", "user").put("content", "Write to jane.doe@example.com")));
        TokenisedRequest t = engine.tokeniseRequest("chat.completions", body, Map.of("names", "off"));
        assertFalse(t.bodyText().contains("jane.doe@example.com"));
        String alias = t.aliases().keySet().iterator().next();
        assertTrue(t.bodyText().contains(alias));
        assertEquals("Sent to jane.doe@example.com", engine.detokenise("Sent to " + alias, t.aliases()));
    }

    @Test
    void aFieldThePolicyDoesNotNameIsRefusedWithItsPath() {
        JsonNode body = Vectors.JSON.createObjectNode().put("model", "m").put("secret_note", "jane.doe@example.com")
                .set("messages", Vectors.JSON.createArrayNode());
        EngineException e = assertThrows(EngineException.class, () -> engine.tokeniseRequest("chat.completions", body, Map.of("names", "off")));
        assertEquals("unsupported_field", e.code());
        assertEquals(400, e.status());
        assertEquals("/secret_note", e.details().get("path").asText());
    }

    @Test
    void anImageIsRefusedAsUnsupportedContent415() {
        JsonNode body = Vectors.JSON.createObjectNode().put("model", "m").set("messages", Vectors.JSON.createArrayNode().add(
                Vectors.JSON.createObjectNode().put("role", "user").set("content", Vectors.JSON.createArrayNode().add(
                        Vectors.JSON.createObjectNode().put("type", "image_url").set("image_url", Vectors.JSON.createObjectNode().put("url", "data:image/png;base64,AAAA"))))));
        EngineException e = assertThrows(EngineException.class, () -> engine.tokeniseRequest("chat.completions", body, Map.of("names", "off")));
        assertEquals("unsupported_content", e.code());
        assertEquals(415, e.status());
    }

    @Test
    void anUnknownRouteAndInvalidJsonAreTypedErrors() {
        assertEquals("invalid_argument", assertThrows(EngineException.class,
                () -> engine.tokeniseRequest("completions.legacy", Vectors.JSON.createObjectNode(), null)).code());
        assertEquals("invalid_json", assertThrows(EngineException.class, () -> engine.canonicalize("{not json")).code());
        assertEquals("invalid_argument", assertThrows(EngineException.class, () -> engine.tokeniseText("x", Map.of("no_such_option", 1))).code());
    }

    @Test
    void aTamperedReceiptIsAVerdictNotAnException() {
        JsonNode r = Vectors.load("receipts");
        JsonNode first = r.get("cases").get(0);
        String header = first.get("input").asText();
        String tampered = header.substring(0, header.length() - 4) + (header.endsWith("AAAA") ? "BBBB" : "AAAA");
        JsonNode verdict = engine.verifyReceipt(tampered, r.get("jwks"), Map.of("now_seconds", first.get("now_seconds").asLong()));
        assertFalse(verdict.get("valid").asBoolean());
    }

    @Test
    void aMissingLibraryIsEngineUnavailableNotACrash() {
        EngineUnavailableException e = assertThrows(EngineUnavailableException.class, () -> Engine.load("/nonexistent/libprivacy_relay.so"));
        assertEquals("engine_unavailable", e.code());
        assertTrue(e.getMessage().contains("build-ffi.sh"));
    }

    @Test
    void aFileThatIsNotTheEngineIsEngineUnavailable() throws IOException {
        Path notALibrary = Files.createTempFile("not-the-engine", ".so");
        try {
            Files.writeString(notALibrary, "plain text");
            assertThrows(EngineUnavailableException.class, () -> Engine.load(notALibrary.toString()));
        } finally {
            Files.delete(notALibrary);
        }
    }

    @Test
    void aClosedStreamingDetokeniserRefusesUse() {
        StreamingDetokeniser d = engine.streamingDetokeniser(Map.of("<EMAIL_1_ynha>", "jane.doe@example.com"));
        assertEquals("to ", d.push("to <EMA"));
        assertEquals("jane.doe@example.com", d.push("IL_1_ynha>"));
        d.close();
        d.close();
        assertThrows(IllegalStateException.class, () -> d.push("x"));
    }

    @Test
    void aLibraryOfAnotherAbiVersionIsEngineUnavailableNamingBothVersions() throws Exception {
        Path lib = OtherAbiLibrary.build();
        EngineUnavailableException e = assertThrows(EngineUnavailableException.class, () -> Engine.load(lib.toString()));
        assertEquals("engine_unavailable", e.code());
        assertTrue(e.getMessage().contains("C ABI version " + (Engine.ABI_VERSION + 1)), e.getMessage());
        assertTrue(e.getMessage().contains("needs " + Engine.ABI_VERSION), e.getMessage());
    }
}
