package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/** {@code client.rest().self()}: what the gateway key may see of itself (no portal token needed). */
public final class SelfService {
    private final RestService rest;

    SelfService(RestService rest) {
        this.rest = rest;
    }

    /** {key_prefix, name, tier, permissions, ...}. */
    public JsonNode key() {
        return rest.get("/api/v1/self/key", Auth.KEY);
    }

    public JsonNode balance() {
        return rest.get("/api/v1/self/balance", Auth.KEY);
    }

    /** {"summary":[...]}; params from, to. */
    public JsonNode usage(Map<String, ?> params) {
        return rest.get("/api/v1/self/usage" + RestService.query(params), Auth.KEY);
    }
}
