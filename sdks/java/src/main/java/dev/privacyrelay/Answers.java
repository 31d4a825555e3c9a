package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;

/** The text of a provider-shaped answer, whichever route it came from. */
final class Answers {
    private Answers() {}

    static String text(JsonNode body) {
        if (body == null) return "";
        JsonNode choices = body.get("choices");
        if (choices != null && choices.isArray() && !choices.isEmpty()) {
            JsonNode content = choices.get(0).path("message").get("content");
            return content != null && content.isTextual() ? content.asText() : "";
        }
        StringBuilder out = new StringBuilder();
        JsonNode content = body.get("content");
        if (content != null && content.isArray()) {
            for (JsonNode block : content) if ("text".equals(block.path("type").asText())) out.append(block.path("text").asText());
            return out.toString();
        }
        JsonNode output = body.get("output");
        if (output != null && output.isArray()) {
            for (JsonNode item : output) {
                for (JsonNode part : item.path("content")) {
                    if ("output_text".equals(part.path("type").asText())) out.append(part.path("text").asText());
                }
            }
        }
        return out.toString();
    }
}
