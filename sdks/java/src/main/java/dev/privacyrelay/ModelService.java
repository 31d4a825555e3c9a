package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;

/** {@code client.models()}: the models the gateway offers ({@code GET /api/v1/models}). */
public final class ModelService {
    private final RelayClient client;

    ModelService(RelayClient client) {
        this.client = client;
    }

    /** {"object":"list","data":[{"id",...}]}. */
    public JsonNode list() {
        return client.rest().request("GET", "/api/v1/models", Auth.KEY, null, CallOptions.NONE);
    }
}
