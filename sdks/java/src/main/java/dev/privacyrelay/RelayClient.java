package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privacyrelay.engine.Engine;
import dev.privacyrelay.engine.TokenisedRequest;
import dev.privacyrelay.errors.ConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A Privacy Relay client. Every relay call is tokenised and attested on this device by the shared engine, sent to
 * your gateway, and answered with the originals restored here, streams included. Gateway-locked: it talks only to an
 * https (or loopback http) URL that answers the gateway identity probe, and sends no key before that probe passed.
 * Thread-safe; make one and share it.
 *
 * <pre>{@code
 * RelayClient client = RelayClient.builder()
 *         .gatewayUrl("https://gateway.example.com")
 *         .apiKeyFile("~/.config/privacy-relay/gateway-key")
 *         .build();
 * RelayResponse answer = client.chat().completions().create(Map.of("model", "gpt-4o-mini",
 *         "messages", List.of(Map.of("role", "user", "content", "Write to jane.doe@example.com"))));
 * System.out.println(answer.text());
 * }</pre>
 */
public final class RelayClient {
    /** The engine id this SDK attests (accepted by the gateway's default allowlist from 0.1.0). */
    public static final String ENGINE_ID = "relay-java";
    /** This SDK's version (the attestation's engine.version). */
    public static final String VERSION = "0.1.0";

    static final Map<String, String> ROUTE_PATHS = Map.of(
            "chat.completions", "/api/v1/chat/completions",
            "messages", "/api/v1/messages",
            "messages.count_tokens", "/api/v1/messages/count_tokens",
            "embeddings", "/api/v1/embeddings",
            "responses", "/api/v1/responses");

    final ObjectMapper json = new ObjectMapper();
    final Engine engine;
    final Transport transport;
    final GatewayIdentity identity;
    final Duration streamIdleTimeout;
    private final String apiKey;
    private final String portalToken;
    private final String names;
    private final String mediaPolicy;
    private final List<String> passthroughPaths;
    private final Path configDir;
    private final String engineSha256;
    private DeviceIdentity device;

    private final ChatService chat;
    private final MessageService messages;
    private final EmbeddingService embeddings;
    private final ModelService models;
    private final ResponseService responses;
    private final RestService rest;

    private RelayClient(Builder b) {
        String base = GatewayUrl.check(b.gatewayUrl);
        if (b.apiKey != null && b.apiKeyFile != null) throw new ConfigurationException("Give apiKey or apiKeyFile, not both.");
        String key = b.apiKeyFile != null ? PrivateFiles.readGatewayKey(b.apiKeyFile) : b.apiKey;
        if (key != null && !PrivateFiles.GATEWAY_KEY.matcher(key).matches()) {
            throw new ConfigurationException("The API key is not a gateway key (svc_...).");
        }
        if (b.portalToken != null && !b.portalToken.startsWith("spt_")) {
            throw new ConfigurationException("The portal token is not a portal token (spt_...).");
        }
        if (b.retries < 0) throw new ConfigurationException("retries must be >= 0.");
        // The engine is loaded now, so a missing library or one of another ABI fails here, not at the first call.
        this.engine = b.engineLibrary != null ? Engine.load(b.engineLibrary) : Engine.shared();
        this.engineSha256 = engine.info().path("sha256").asText();
        // Plain http (loopback development only) stays HTTP/1.1: the JDK's h2c upgrade offer on a new connection is
        // taken by servers with an upgrade (WebSocket) handler as a request to close it. https negotiates by ALPN.
        HttpClient http = b.httpClient != null ? b.httpClient
                : HttpClient.newBuilder().connectTimeout(b.timeout).followRedirects(HttpClient.Redirect.NEVER)
                        .version(base.startsWith("http:") ? HttpClient.Version.HTTP_1_1 : HttpClient.Version.HTTP_2).build();
        if (http.followRedirects() != HttpClient.Redirect.NEVER) {
            throw new ConfigurationException("The HttpClient must not follow redirects: the key may only reach the gateway that answered the identity probe.");
        }
        this.transport = new Transport(http, base, b.retries, b.timeout, b.maxRetryAfter, b.sleeper);
        this.streamIdleTimeout = b.streamIdleTimeout != null ? b.streamIdleTimeout : b.timeout;
        this.identity = new GatewayIdentity(http, base, b.timeout, b.jwksRefetchInterval, json);
        this.apiKey = key;
        this.portalToken = b.portalToken;
        this.names = b.nameModel;
        this.mediaPolicy = b.mediaPolicy;
        this.passthroughPaths = List.copyOf(b.passthroughPaths);
        this.configDir = b.configDir != null ? PrivateFiles.expandHome(b.configDir) : null;
        this.chat = new ChatService(this);
        this.messages = new MessageService(this);
        this.embeddings = new EmbeddingService(this);
        this.models = new ModelService(this);
        this.responses = new ResponseService(this);
        this.rest = new RestService(this);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code client.chat().completions()}: OpenAI chat completions. */
    public ChatService chat() {
        return chat;
    }

    /** Anthropic messages (and their token count). */
    public MessageService messages() {
        return messages;
    }

    public EmbeddingService embeddings() {
        return embeddings;
    }

    public ModelService models() {
        return models;
    }

    /** The OpenAI Responses route. */
    public ResponseService responses() {
        return responses;
    }

    /** The REST capability set: keys, receipts, webhooks, billing, self, self-service and demo keys, any route. */
    public RestService rest() {
        return rest;
    }

    /** The gateway base URL this client is locked to. */
    public String gatewayUrl() {
        return transport.base();
    }

    /** The gateway's receipt keys (the identity probe's answer, cached). */
    public JsonNode jwks() {
        return identity.jwks();
    }

    /** {"id":"relay-java","version","sha256"}: what this client attests (sha256: the engine core's build). */
    public Map<String, String> engineIdentity() {
        return Map.of("id", ENGINE_ID, "version", VERSION, "sha256", engineSha256);
    }

    /**
     * Verifies a receipt (header value, JSON text or decoded envelope; v1, v2, failed, v3) offline against the
     * gateway's JWKS, cached; a kid the cached set lacks triggers one (rate-limited) refetch, so a receipt signed by
     * a key rotated in later verifies.
     */
    public Verification verifyReceipt(Object receipt) {
        return verifyRefreshing(receipt, null);
    }

    /** Verifies a v3 countersignature and that it countersigns {@code attestation} (the X-Service-Attestation sent). */
    public Verification verifyCountersignature(Object countersignature, String attestation) {
        if (attestation == null) throw new ConfigurationException("Give the attestation the countersignature should countersign.");
        return verifyRefreshing(countersignature, attestation);
    }

    /**
     * Verifies receipts of one chain, in chain order (a page of stored receipts, the failed receipts of refusals)
     * offline against the gateway's JWKS: {"valid","verified","break":null|{"index","seq","kind","reason"},"gaps"}.
     */
    public JsonNode verifyReceiptChain(List<?> receipts) {
        return engine.verifyChain(json.valueToTree(receipts), identity.jwks(), Map.of());
    }

    Verification verifyRefreshing(Object receipt, String attestation) {
        Verification v = Receipts.verify(engine, receipt, identity.jwks(), null, attestation);
        if (v.valid() || v.reason() == null || !v.reason().contains(Receipts.UNKNOWN_KID)) return v;
        JsonNode fresh = identity.refetch();
        return fresh == null ? v : Receipts.verify(engine, receipt, fresh, null, attestation);
    }

    // ---- the relay pipeline -------------------------------------------------------------------------------------

    /** What leaves the device for one call, and what stays to restore the answer. */
    record Prepared(String route, String bodyText, Map<String, String> aliases, Map<String, String> headers) {}

    ObjectNode toBody(Object body) {
        JsonNode node = body instanceof JsonNode ? ((JsonNode) body).deepCopy() : json.valueToTree(body);
        if (node == null || !node.isObject()) throw new ConfigurationException("The request body must be a JSON object (a Map or an ObjectNode).");
        return (ObjectNode) node;
    }

    private synchronized DeviceIdentity device() {
        if (device == null) device = DeviceIdentity.load(configDir != null ? configDir : DeviceIdentity.defaultDir(), engine, json);
        return device;
    }

    /** Tokenises {@code body} for {@code route} under the egress policy and attests the exact bytes: nothing is sent yet. */
    Prepared prepare(String route, ObjectNode body, CallOptions o) {
        DeviceIdentity d = device();
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("names", names);
        options.put("identifier_secret_hex", d.aliasSecretHex);
        options.put("media_policy", mediaPolicy);
        options.put("passthrough_paths", passthroughPaths);
        if (route.equals("embeddings")) options.put("stable_alias_secret_hex", d.aliasSecretHex);
        if (o.idempotencyKey() != null) {
            options.put("device_alias_secret_hex", d.aliasSecretHex);
            options.put("idempotency_key", o.idempotencyKey());
        }
        TokenisedRequest t = engine.tokeniseRequest(route, body, options);
        ObjectNode input = json.createObjectNode();
        input.put("route", route).put("body", t.bodyText()).put("body_is_canonical", true);
        input.set("detectors_fired", json.valueToTree(t.detectorsFired()));
        input.set("engine", json.createObjectNode().put("id", ENGINE_ID).put("version", VERSION).put("sha256", engineSha256));
        if (t.passthrough() != null && t.passthrough().isArray() && !t.passthrough().isEmpty()) input.set("passthrough", t.passthrough());
        JsonNode att = engine.buildAttestation(input, d.privateJwk);
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("x-service-engine", att.get("engine_header").asText());
        headers.put("x-service-attestation", att.get("header").asText());
        return new Prepared(route, t.bodyText(), t.aliases(), headers);
    }

    Map<String, String> headers(Auth auth, CallOptions o, boolean write) {
        Map<String, String> h = new LinkedHashMap<>();
        if (auth == Auth.KEY) {
            if (apiKey == null) throw new ConfigurationException("This call needs a gateway key: give apiKey or apiKeyFile.");
            h.put("authorization", "Bearer " + apiKey);
        } else if (auth == Auth.PORTAL) {
            if (portalToken == null) throw new ConfigurationException("This call needs a portal token: give portalToken (spt_...).");
            h.put("authorization", "Bearer " + portalToken);
        }
        h.put("accept", "application/json");
        h.put("traceparent", o.traceparent() != null ? o.traceparent() : newTraceparent());
        h.put("user-agent", "privacy-relay-java/" + VERSION);
        if (write) {
            h.put("idempotency-key", o.idempotencyKey() != null ? o.idempotencyKey() : UUID.randomUUID().toString());
            h.put("content-type", "application/json");
        }
        return h;
    }

    private record Sent<T>(Prepared prepared, HttpResponse<T> response) {}

    private Map<String, String> relayHeaders(Prepared p, CallOptions o, boolean stream) {
        Map<String, String> h = headers(Auth.KEY, o, true);
        h.putAll(p.headers());
        if (stream) h.put("accept", "text/event-stream");
        return h;
    }

    /** Tokenises, probes the gateway, sends and restores one JSON relay call. */
    RelayResponse relayJson(String route, Object body, CallOptions o) {
        headers(Auth.KEY, o, false); // no key: refused before the engine or the network is touched
        Prepared p = prepare(route, toBody(body), o);
        identity.jwks();
        HttpResponse<byte[]> res = transport.send("POST", ROUTE_PATHS.get(route), relayHeaders(p, o, false), p.bodyText().getBytes(StandardCharsets.UTF_8));
        String requestId = res.headers().firstValue("x-request-id").orElse(null);
        String answer = new String(res.body(), StandardCharsets.UTF_8);
        JsonNode restored;
        try {
            restored = json.readTree(answer);
        } catch (IOException e) {
            restored = null;
        }
        if (restored == null || !restored.isContainerNode()) {
            throw new RelayException("invalid_answer", "The gateway's answer is not JSON.", res.statusCode(), requestId, null);
        }
        restored = JsonRestore.restore(engine, restored, p.aliases(), jsonEscaped(p.aliases()), null);
        JsonNode receipt = decodeHeader(res.headers().firstValue("x-service-receipt-v2").orElse(null));
        JsonNode countersignature = decodeHeader(res.headers().firstValue("x-service-receipt-v3").orElse(null));
        String attestation = p.headers().get("x-service-attestation");
        return new RelayResponse(restored, requestId, receipt, receipt == null ? null : verifyQuietly(receipt, null), p.bodyText(), attestation,
                countersignature, countersignature == null ? null : verifyQuietly(countersignature, attestation));
    }

    /** Tokenises, probes the gateway and opens one streamed relay call. */
    RelayStream relayStream(String route, Object body, CallOptions o) {
        headers(Auth.KEY, o, false);
        ObjectNode b = toBody(body);
        b.put("stream", true);
        Prepared p = prepare(route, b, o);
        identity.jwks();
        HttpResponse<InputStream> res = transport.sendStreaming("POST", ROUTE_PATHS.get(route), relayHeaders(p, o, true), p.bodyText().getBytes(StandardCharsets.UTF_8));
        return new RelayStream(this, route, res, p);
    }

    /** The verdict, or a failed one when the receipt could not even be checked (e.g. the JWKS became unreachable). */
    Verification verifyQuietly(JsonNode receipt, String attestation) {
        try {
            return verifyRefreshing(receipt, attestation);
        } catch (RelayException e) {
            return new Verification(false, e.code() + ": " + e.getMessage(), null);
        }
    }

    /** The alias map with each original escaped for the inside of a JSON string (aliases sit inside JSON strings). */
    Map<String, String> jsonEscaped(Map<String, String> aliases) {
        Map<String, String> out = new LinkedHashMap<>();
        aliases.forEach((alias, original) -> {
            try {
                String quoted = json.writeValueAsString(original);
                out.put(alias, quoted.substring(1, quoted.length() - 1));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        return out;
    }

    /** A standard padded base64 JSON header value, decoded; null when absent or unreadable. */
    JsonNode decodeHeader(String value) {
        if (value == null || value.isBlank()) return null;
        try {
            JsonNode n = json.readTree(Base64.getDecoder().decode(value.strip()));
            return n != null && n.isObject() ? n : null;
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A fresh W3C traceparent (version 00, sampled). */
    public static String newTraceparent() {
        byte[] b = new byte[24];
        RANDOM.nextBytes(b);
        HexFormat hex = HexFormat.of();
        return "00-" + hex.formatHex(b, 0, 16) + "-" + hex.formatHex(b, 16, 24) + "-01";
    }

    /** Settings of a {@link RelayClient}; {@link #gatewayUrl} is required, a key for the relay routes. */
    public static final class Builder {
        private String gatewayUrl;
        private String apiKey;
        private String apiKeyFile;
        private String portalToken;
        private String nameModel = "builtin";
        private String mediaPolicy = "refuse";
        private List<String> passthroughPaths = List.of();
        private int retries = 2;
        private Duration timeout = Duration.ofSeconds(60);
        private Duration maxRetryAfter = Duration.ofSeconds(60);
        private Duration jwksRefetchInterval = Duration.ofSeconds(30);
        private Duration streamIdleTimeout;
        private String configDir;
        private String engineLibrary;
        private HttpClient httpClient;
        private Transport.Sleeper sleeper = d -> Thread.sleep(d.toMillis());

        private Builder() {}

        /** The gateway's base URL: https, or http to a loopback host for development. */
        public Builder gatewayUrl(String url) {
            this.gatewayUrl = url;
            return this;
        }

        /** The gateway key (svc_...). Prefer {@link #apiKeyFile}: a key in code ends up in version control. */
        public Builder apiKey(String key) {
            this.apiKey = key;
            return this;
        }

        /** A file holding the gateway key, readable only by you (chmod 600); ~/ is your home. */
        public Builder apiKeyFile(String path) {
            this.apiKeyFile = path;
            return this;
        }

        /** The portal token (spt_...) the portal-token routes need (keys, billing, webhooks, stored receipts). */
        public Builder portalToken(String token) {
            this.portalToken = token;
            return this;
        }

        /** The person-name model: "builtin" (default) or "off". */
        public Builder nameModel(String model) {
            if (!model.equals("builtin") && !model.equals("off")) throw new ConfigurationException("nameModel must be \"builtin\" or \"off\", not \"" + model + "\".");
            this.nameModel = model;
            return this;
        }

        /** MEDIA_POLICY: "refuse" (default: media is refused, 415 unsupported_content) or "pass" (sent, declared). */
        public Builder mediaPolicy(String policy) {
            if (!policy.equals("refuse") && !policy.equals("pass")) throw new ConfigurationException("mediaPolicy must be \"refuse\" or \"pass\", not \"" + policy + "\".");
            this.mediaPolicy = policy;
            return this;
        }

        /** PASSTHROUGH_PATHS: JSON pointers ("*" for one segment) of fields sent untokenised, declared in the attestation. */
        public Builder passthroughPaths(List<String> paths) {
            for (String p : paths) if (!p.startsWith("/")) throw new ConfigurationException("Passthrough path \"" + p + "\" is not a JSON pointer (it starts with /).");
            this.passthroughPaths = List.copyOf(paths);
            return this;
        }

        /** How many times a failed call is retried (default 2): 408, 429, 5xx except 501, connection errors. */
        public Builder retries(int n) {
            this.retries = n;
            return this;
        }

        /** Bounds each attempt (default 60 s; a stream until its headers arrive). */
        public Builder timeout(Duration d) {
            this.timeout = d;
            return this;
        }

        /**
         * The longest a stream may send nothing before it is closed and {@code hasNext()} throws
         * {@link dev.privacyrelay.errors.RelayTimeoutException} (default: the timeout, 60 s).
         */
        public Builder streamIdleTimeout(Duration d) {
            this.streamIdleTimeout = d;
            return this;
        }

        /** The longest Retry-After the client waits by itself (default 60 s); a longer one is thrown at once. */
        public Builder maxRetryAfter(Duration d) {
            this.maxRetryAfter = d;
            return this;
        }

        /** The least time between two JWKS refetches on an unknown kid (default 30 s). */
        public Builder jwksRefetchInterval(Duration d) {
            this.jwksRefetchInterval = d;
            return this;
        }

        /** Where the device attester key and alias secret live (default: see the README). */
        public Builder configDir(String dir) {
            this.configDir = dir;
            return this;
        }

        /** The engine library to load instead of the jar's copy (default: privacyrelay.lib, PRIVACY_RELAY_LIB, the jar). */
        public Builder engineLibrary(String path) {
            this.engineLibrary = path;
            return this;
        }

        /** Your HttpClient (it must not follow redirects). */
        public Builder httpClient(HttpClient client) {
            this.httpClient = client;
            return this;
        }

        Builder sleeper(Transport.Sleeper s) {
            this.sleeper = s;
            return this;
        }

        /**
         * Checks the URL, the key (file permissions included) and the engine library (its C ABI version): a
         * {@link ConfigurationException} or {@link dev.privacyrelay.engine.EngineUnavailableException} here, never at
         * the first call. Nothing is sent yet.
         */
        public RelayClient build() {
            return new RelayClient(this);
        }
    }
}
