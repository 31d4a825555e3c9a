package dev.privacyrelay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Receipts.verify, the offline face without a client: the verdicts of sdks/vectors/receipts.json's cases. */
class ReceiptsTest {
    @Test
    void everyReceiptCaseGivesItsVerdictAndReasonThroughTheStaticFace() throws Exception {
        JsonNode r = StubGateway.JSON.readTree(Path.of(System.getProperty("privacyrelay.vectors", "../vectors"), "receipts.json").toFile());
        int invalid = 0;
        for (JsonNode c : r.get("cases")) {
            if (c.has("previous") || c.has("attestation")) continue; // those options are the engine's (engine.VectorsTest)
            Object input = c.get("input").isTextual() ? c.get("input").asText() : c.get("input");
            Verification v = Receipts.verify(input, r.get("jwks"), Instant.ofEpochSecond(c.get("now_seconds").asLong()), null);
            String name = c.get("name").asText();
            assertEquals(c.get("expected").get("valid").asBoolean(), v.valid(), name);
            JsonNode reason = c.get("expected").get("reason");
            assertEquals(reason == null || reason.isNull() ? null : reason.asText(), v.reason(), name);
            assertNotNull(v.checks(), name);
            if (!v.valid()) invalid++;
        }
        assertFalse(invalid == 0, "the vectors include tampered receipts");
    }
}
