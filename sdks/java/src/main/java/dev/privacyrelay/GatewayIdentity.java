package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.privacyrelay.errors.GatewayIdentityException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;

/**
 * The gateway identity probe and the receipt keys it answers: {@code GET
 * /api/.well-known/service-receipt-pubkeys.jwks} must answer a JWKS of public P-256 keys before any key or body is
 * sent. The set is cached; a receipt naming a kid the set lacks triggers a refetch (the set may predate a key
 * rotation), at most one per {@code refetchInterval} so invented kids cannot make the client hammer the gateway.
 */
final class GatewayIdentity {
    static final String PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks";

    private final HttpClient http;
    private final String base;
    private final Duration timeout;
    private final Duration refetchInterval;
    private final ObjectMapper json;
    private JsonNode jwks;
    private Instant lastRefetch;

    GatewayIdentity(HttpClient http, String base, Duration timeout, Duration refetchInterval, ObjectMapper json) {
        this.http = http;
        this.base = base;
        this.timeout = timeout;
        this.refetchInterval = refetchInterval;
        this.json = json;
    }

    /** The JWKS, probing the gateway the first time (again after a failed probe). */
    synchronized JsonNode jwks() {
        if (jwks == null) jwks = fetch();
        return jwks;
    }

    /** A fresh JWKS because a receipt names an unknown kid, or null when the last refetch was too recent or failed. */
    synchronized JsonNode refetch() {
        Instant now = Instant.now();
        if (lastRefetch != null && Duration.between(lastRefetch, now).compareTo(refetchInterval) < 0) return null;
        lastRefetch = now;
        try {
            jwks = fetch();
            return jwks;
        } catch (GatewayIdentityException e) {
            return null;
        }
    }

    private JsonNode fetch() {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + PROBE_PATH)).timeout(timeout).header("accept", "application/json").GET().build();
        HttpResponse<byte[]> res;
        try {
            res = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new GatewayIdentityException("gateway_unreachable", base + " did not answer the gateway identity probe: " + e + ". Nothing was sent.", 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GatewayIdentityException("gateway_unreachable", "The gateway identity probe was interrupted. Nothing was sent.", 0);
        }
        JsonNode doc;
        try {
            doc = res.statusCode() == 200 ? json.readTree(res.body()) : null;
        } catch (IOException notJson) {
            doc = null;
        }
        JsonNode keys = doc == null ? null : doc.get("keys");
        if (keys == null || !keys.isArray() || keys.isEmpty()) {
            throw new GatewayIdentityException("gateway_identity_failed", base + " is not a Privacy Relay gateway (its identity probe " + PROBE_PATH
                    + " did not answer a JWKS of receipt keys); nothing was sent.", res.statusCode());
        }
        for (JsonNode k : keys) {
            if (!"EC".equals(k.path("kty").asText()) || !"P-256".equals(k.path("crv").asText()) || k.has("d")) {
                throw new GatewayIdentityException("gateway_identity_failed", base + " answered the identity probe with a key that is not a public P-256 key; nothing was sent.", res.statusCode());
            }
        }
        return doc;
    }
}
