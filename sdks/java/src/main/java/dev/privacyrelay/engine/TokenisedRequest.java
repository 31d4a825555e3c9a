package dev.privacyrelay.engine;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * A request body as it may leave the device. {@code bodyText} is the RFC 8785 text to send, byte for byte (it is what
 * the attestation signs); {@code aliases} maps each alias to its original, in the order they were made, and never
 * leaves the device; {@code passthrough} names what an opt-in let through untokenised (the attestation's claim);
 * {@code detectorsFired} counts the values found by type.
 */
public record TokenisedRequest(
        JsonNode body, String bodyText, Map<String, String> aliases, JsonNode passthrough, Map<String, Integer> detectorsFired) {
}
