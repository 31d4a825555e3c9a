package dev.privacyrelay.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads sdks/vectors/<name>.json (the folder is passed by Maven as the privacyrelay.vectors property). */
final class Vectors {
    static final ObjectMapper JSON = new ObjectMapper();

    private Vectors() {}

    static JsonNode load(String name) {
        String dir = System.getProperty("privacyrelay.vectors", "../vectors");
        try {
            return JSON.readTree(Path.of(dir, name + ".json").toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A JSON object as the options map the engine takes. */
    static Map<String, Object> options(JsonNode object) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (object != null) object.fields().forEachRemaining(e -> out.put(e.getKey(), JSON.convertValue(e.getValue(), Object.class)));
        return out;
    }

    /** [[alias, original], ...] as an ordered map. */
    static Map<String, String> pairs(JsonNode array) {
        Map<String, String> out = new LinkedHashMap<>();
        array.forEach(p -> out.put(p.get(0).asText(), p.get(1).asText()));
        return out;
    }
}
