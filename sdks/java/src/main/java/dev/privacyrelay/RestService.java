package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * {@code client.rest()}: the gateway's REST capability set. Typed groups for keys, receipts, webhooks, billing and the
 * key's own view; {@link #request} reaches any other route of docs/openapi.json. A credential goes only to a URL that
 * passed the identity probe; every write carries an Idempotency-Key (the options' own, else a fresh one) that its
 * retries reuse; errors are {@link RelayException} subclasses.
 */
public final class RestService {
    private final RelayClient client;
    private final KeyService keys;
    private final ReceiptService receipts;
    private final WebhookService webhooks;
    private final BillingService billing;
    private final SelfService self;

    RestService(RelayClient client) {
        this.client = client;
        this.keys = new KeyService(this);
        this.receipts = new ReceiptService(this, client);
        this.webhooks = new WebhookService(this);
        this.billing = new BillingService(this);
        this.self = new SelfService(this);
    }

    /** API keys (portal token). */
    public KeyService keys() {
        return keys;
    }

    /** Stored receipts, online verification, countersignatures, the transparency log. */
    public ReceiptService receipts() {
        return receipts;
    }

    /** Webhook endpoints and deliveries (portal token). */
    public WebhookService webhooks() {
        return webhooks;
    }

    /** Balance, top-up, ledger, usage, licences (portal token). */
    public BillingService billing() {
        return billing;
    }

    /** The gateway key's own view: key, balance, usage. */
    public SelfService self() {
        return self;
    }

    /** A self-service key (no auth; {@code POST /api/v1/self-service/key}): {api_key, key_prefix, ...}, the key once. */
    public JsonNode selfServiceKey(Map<String, ?> body, CallOptions options) {
        return request("POST", "/api/v1/self-service/key", Auth.NONE, body == null ? Map.of() : body, options);
    }

    /** An anonymous demo key ({@code POST /api/v1/demo/key}): relay routes only, $2, 24 h, no receipts. */
    public JsonNode demoKey() {
        return request("POST", "/api/v1/demo/key", Auth.NONE, Map.of(), CallOptions.NONE);
    }

    /**
     * Calls any route: its JSON answer (null for an empty one, e.g. 204). {@code body} is a Map, a JsonNode or null.
     */
    public JsonNode request(String method, String path, Auth auth, Object body, CallOptions options) {
        String m = method.toUpperCase(java.util.Locale.ROOT);
        boolean write = !m.equals("GET") && !m.equals("HEAD");
        Map<String, String> h = client.headers(auth, options, write);
        if (auth != Auth.NONE) client.identity.jwks();
        byte[] raw = null;
        if (body != null) {
            try {
                raw = client.json.writeValueAsBytes(body instanceof JsonNode ? body : client.json.valueToTree(body));
            } catch (IOException e) {
                throw new RelayException("invalid_request", "The request body does not encode as JSON: " + e.getMessage(), 400, null, null);
            }
        } else if (write) {
            h.remove("content-type");
        }
        HttpResponse<byte[]> res = client.transport.send(m, path, h, raw);
        if (res.body().length == 0) return null;
        try {
            return client.json.readTree(res.body());
        } catch (IOException e) {
            throw new RelayException("invalid_answer", "The answer of " + m + " " + path + " is not JSON.", res.statusCode(),
                    res.headers().firstValue("x-request-id").orElse(null), null);
        }
    }

    RelayClient client() {
        return client;
    }

    JsonNode get(String path, Auth auth) {
        return request("GET", path, auth, null, CallOptions.NONE);
    }

    static String seg(Object value) {
        return URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** "?k=v&..." of the pairs whose value is not null, or "". */
    static String query(Object... pairs) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) if (pairs[i + 1] != null) m.put((String) pairs[i], pairs[i + 1]);
        return query(m);
    }

    static String query(Map<String, ?> params) {
        if (params == null || params.isEmpty()) return "";
        StringJoiner j = new StringJoiner("&", "?", "");
        params.forEach((k, v) -> {
            if (v != null) j.add(seg(k) + "=" + seg(v));
        });
        return j.length() == 1 ? "" : j.toString();
    }
}
