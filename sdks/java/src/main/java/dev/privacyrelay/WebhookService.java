package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code client.rest().webhooks()}: endpoints and deliveries (portal token with webhooks.manage / webhooks.read). */
public final class WebhookService {
    private static final String ENDPOINTS = "/api/v1/webhooks/endpoints";
    private static final String DELIVERIES = "/api/v1/webhooks/deliveries";
    private final RestService rest;

    WebhookService(RestService rest) {
        this.rest = rest;
    }

    /** A new endpoint; its {@code secret} is in this answer (and a rotation's) only. */
    public JsonNode createEndpoint(String url, List<String> events) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("url", url);
        if (events != null) body.put("events", events);
        return rest.request("POST", ENDPOINTS, Auth.PORTAL, body, CallOptions.NONE);
    }

    /** {"endpoints":[...]}. */
    public JsonNode listEndpoints() {
        return rest.get(ENDPOINTS, Auth.PORTAL);
    }

    public JsonNode getEndpoint(String id) {
        return rest.get(ENDPOINTS + "/" + RestService.seg(id), Auth.PORTAL);
    }

    public JsonNode updateEndpoint(String id, Map<String, ?> changes) {
        return rest.request("PATCH", ENDPOINTS + "/" + RestService.seg(id), Auth.PORTAL, changes, CallOptions.NONE);
    }

    public void deleteEndpoint(String id) {
        rest.request("DELETE", ENDPOINTS + "/" + RestService.seg(id), Auth.PORTAL, null, CallOptions.NONE);
    }

    /** A new secret (in the answer); the old one stops verifying. */
    public JsonNode rotateSecret(String id) {
        return rest.request("POST", ENDPOINTS + "/" + RestService.seg(id) + "/rotate", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }

    public JsonNode resumeEndpoint(String id) {
        return rest.request("POST", ENDPOINTS + "/" + RestService.seg(id) + "/resume", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }

    /** Sends a {@code webhook.test} event to the endpoint: the delivery row. */
    public JsonNode testEndpoint(String id) {
        return rest.request("POST", ENDPOINTS + "/" + RestService.seg(id) + "/test", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }

    /** {"deliveries":[...]}; params limit, before, endpoint_id, status. */
    public JsonNode listDeliveries(Map<String, ?> params) {
        return rest.get(DELIVERIES + RestService.query(params), Auth.PORTAL);
    }

    public JsonNode getDelivery(String id) {
        return rest.get(DELIVERIES + "/" + RestService.seg(id), Auth.PORTAL);
    }

    /** Delivers the event again (a new delivery whose {@code replay_of} names this one). */
    public JsonNode replayDelivery(String id) {
        return rest.request("POST", DELIVERIES + "/" + RestService.seg(id) + "/replay", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }
}
