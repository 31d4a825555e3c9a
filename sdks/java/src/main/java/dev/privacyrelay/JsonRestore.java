package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.privacyrelay.engine.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Restores originals in a parsed JSON value, string by string (as sdks/ruby's JsonRestore). The value of an
 * "arguments" key (a tool call's arguments: JSON text inside a JSON string, in chat completions and Responses function
 * calls) takes the originals escaped for the inside of a JSON string, so it still parses when an original holds a
 * quote, a backslash or a newline. One copy, for non-streamed answers and for the whole events of a stream.
 */
final class JsonRestore {
    private JsonRestore() {}

    /** Restores {@code value} in place (a string node is replaced; answers the value to use). */
    static JsonNode restore(Engine engine, JsonNode value, Map<String, String> aliases, Map<String, String> escaped, String key) {
        if (aliases.isEmpty()) return value;
        if (value.isTextual()) return TextNode.valueOf(engine.detokenise(value.asText(), "arguments".equals(key) ? escaped : aliases));
        if (value instanceof ArrayNode) {
            ArrayNode a = (ArrayNode) value;
            for (int i = 0; i < a.size(); i++) a.set(i, restore(engine, a.get(i), aliases, escaped, null));
        } else if (value instanceof ObjectNode) {
            ObjectNode o = (ObjectNode) value;
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            for (String k : names) o.set(k, restore(engine, o.get(k), aliases, escaped, k));
        }
        return value;
    }
}
