package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/** {@code client.rest().keys()}: API keys of the portal token's organisation (abilities keys.read / keys.write). */
public final class KeyService {
    private final RestService rest;

    KeyService(RestService rest) {
        this.rest = rest;
    }

    /** {@code {name?, permissions?, models?}} -> 201 {id, api_key (shown once), key_prefix, name, tier, permissions}. */
    public JsonNode create(Map<String, ?> body, CallOptions options) {
        return rest.request("POST", "/api/keys", Auth.PORTAL, body, options);
    }

    /** {"keys":[...]} without secrets. */
    public JsonNode list() {
        return rest.get("/api/v1/keys", Auth.PORTAL);
    }

    public JsonNode update(String id, Map<String, ?> changes) {
        return rest.request("PATCH", "/api/keys/" + RestService.seg(id), Auth.PORTAL, changes, CallOptions.NONE);
    }

    /** A new key replacing {@code id} (answered like create; {@code replaces} names the old one). */
    public JsonNode rotate(String id) {
        return rest.request("POST", "/api/keys/" + RestService.seg(id) + "/rotate", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }

    public JsonNode revoke(String id) {
        return rest.request("POST", "/api/keys/" + RestService.seg(id) + "/revoke", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }

    /** {"permissions","models"} of key {@code id}, or null when the organisation has no such key. */
    public JsonNode scopes(String id) {
        for (JsonNode k : list().path("keys")) {
            if (id.equals(k.path("id").asText())) {
                return rest.client().json.createObjectNode().<com.fasterxml.jackson.databind.node.ObjectNode>set("permissions", k.get("permissions")).set("models", k.get("models"));
            }
        }
        return null;
    }

}
