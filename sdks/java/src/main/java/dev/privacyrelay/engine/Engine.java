package dev.privacyrelay.engine;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The on-device engine (the shared Rust engine, through its C ABI): tokenises request bodies under the egress policy,
 * restores originals in answers and streams, and verifies receipts and webhook signatures offline. Thread-safe.
 *
 * <p>The library is found, first match wins: the {@code privacyrelay.lib} system property or the
 * {@code PRIVACY_RELAY_LIB} environment variable (a path); else the copy bundled in this jar
 * ({@code linux-x86-64/libprivacy_relay.so}) or JNA's search path. A missing library, a file that is not it, or a
 * library of another C ABI version is an {@link EngineUnavailableException}, never a crash.
 */
public final class Engine {
    /** The C ABI version this binding was written for (PR_ABI_VERSION). */
    public static final int ABI_VERSION = 1;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static volatile Engine shared;

    private final NativeLibraryBinding lib;

    private Engine(NativeLibraryBinding lib) {
        this.lib = lib;
    }

    /** The engine of this process, loaded on first use. */
    public static Engine shared() {
        Engine e = shared;
        if (e == null) {
            synchronized (Engine.class) {
                e = shared;
                if (e == null) shared = e = load(configuredPath());
            }
        }
        return e;
    }

    /** Loads the engine from {@code path} (a file), or from the jar and JNA's search path when null. */
    public static Engine load(String path) {
        Map<String, Object> options = Map.of(Library.OPTION_STRING_ENCODING, StandardCharsets.UTF_8.name());
        NativeLibraryBinding lib;
        String where = path == null ? "the jar's linux-x86-64/libprivacy_relay.so or JNA's search path" : path;
        if (path != null && !Files.isRegularFile(Path.of(path))) {
            throw new EngineUnavailableException("The engine library " + path + " does not exist. Build it with sdks/rust/build-ffi.sh, or unset privacyrelay.lib / PRIVACY_RELAY_LIB to use the copy in the jar.");
        }
        try {
            lib = Native.load(path == null ? "privacy_relay" : path, NativeLibraryBinding.class, options);
        } catch (UnsatisfiedLinkError e) {
            throw new EngineUnavailableException("The engine library could not be loaded from " + where + ": " + e.getMessage()
                    + ". Build it with sdks/rust/build-ffi.sh and set privacyrelay.lib, or use the jar built by sdks/java/ci.sh (it bundles the library).");
        }
        int abi;
        try {
            abi = lib.pr_abi_version();
        } catch (UnsatisfiedLinkError e) {
            throw new EngineUnavailableException(where + " is not the Privacy Relay engine (no pr_abi_version): " + e.getMessage());
        }
        if (abi != ABI_VERSION) {
            throw new EngineUnavailableException(where + " has C ABI version " + abi + "; this SDK needs " + ABI_VERSION + ". Use the library of the same release as the SDK.");
        }
        return new Engine(lib);
    }

    private static String configuredPath() {
        String p = System.getProperty("privacyrelay.lib");
        if (p == null || p.isEmpty()) p = System.getenv("PRIVACY_RELAY_LIB");
        return p == null || p.isEmpty() ? null : p;
    }

    /** {"id":"relay-rs","version","sha256","abi_version","routes","entity_types",...}. */
    public JsonNode info() {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_engine_info(out), out));
    }

    /**
     * Tokenises one request body for {@code route} ("chat.completions", "messages", "messages.count_tokens",
     * "embeddings", "responses") under the egress policy. Options as the C ABI names them ({@code names},
     * {@code secret_hex}, {@code media_policy}, {@code passthrough_paths}, ...). A refused field is an
     * {@link EngineException} ({@code unsupported_field} with {@code details.path}, {@code unsupported_content},
     * {@code nesting_too_deep}): nothing may be sent then.
     */
    public TokenisedRequest tokeniseRequest(String route, JsonNode body, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        JsonNode r = json(result(lib.pr_tokenise_request(route, text(body), optionsText(options), out), out));
        Map<String, String> aliases = new LinkedHashMap<>();
        r.get("map").forEach(pair -> aliases.put(pair.get(0).asText(), pair.get(1).asText()));
        Map<String, Integer> fired = new LinkedHashMap<>();
        r.get("detectors_fired").fields().forEachRemaining(e -> fired.put(e.getKey(), e.getValue().asInt()));
        return new TokenisedRequest(r.get("body"), r.get("body_text").asText(), aliases, r.get("passthrough"), fired);
    }

    /** Tokenises one text: {"text","map":[[alias, original],...],"detectors_fired"}. */
    public JsonNode tokeniseText(String text, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_tokenise_text(text, optionsText(options), out), out));
    }

    /** The values found in {@code text}: {"spans":[{"start","end","type","value",...}]} (UTF-16 offsets, as Java's). */
    public JsonNode detectSpans(String text, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_detect_spans(text, optionsText(options), out), out));
    }

    /** {@code text} with every alias of {@code aliases} replaced by its original. */
    public String detokenise(String text, Map<String, String> aliases) {
        PointerByReference out = new PointerByReference();
        return result(lib.pr_detokenise(text, text(JSON.valueToTree(aliases)), out), out);
    }

    /** A detokeniser for one stream of chunks (aliases cut across chunks restored when whole). */
    public StreamingDetokeniser streamingDetokeniser(Map<String, String> aliases) {
        PointerByReference handle = new PointerByReference();
        PointerByReference out = new PointerByReference();
        int rc = lib.pr_detokeniser_new(text(JSON.valueToTree(aliases)), handle, out);
        result(rc, out);
        return new StreamingDetokeniser(this, handle.getValue());
    }

    String pushChunk(Pointer handle, String chunk) {
        PointerByReference out = new PointerByReference();
        return result(lib.pr_detokeniser_push(handle, chunk, out), out);
    }

    String finishStream(Pointer handle) {
        PointerByReference out = new PointerByReference();
        return result(lib.pr_detokeniser_finish(handle, out), out);
    }

    void freeStream(Pointer handle) {
        lib.pr_detokeniser_free(handle);
    }

    /**
     * Verifies a receipt offline against a JWKS: the verdict {"valid", "reason"?, "checks", ...}. An invalid receipt
     * is a verdict, not an exception; a malformed JWKS is an {@link EngineException} ({@code jwks_invalid}).
     */
    public JsonNode verifyReceipt(String receipt, JsonNode jwks, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_receipt(receipt, text(jwks), optionsText(options), out), out));
    }

    /** Verifies a chain of receipts in chain order: {"valid","verified","break"?}. */
    public JsonNode verifyChain(JsonNode receipts, JsonNode jwks, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_chain(text(receipts), text(jwks), optionsText(options), out), out));
    }

    /** Verifies a transparency-log inclusion proof against a signed tree head. */
    public JsonNode verifyInclusionProof(JsonNode proof, JsonNode sth, JsonNode jwks, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_inclusion_proof(text(proof), text(sth), text(jwks), optionsText(options), out), out));
    }

    /**
     * Verifies a transparency-log consistency proof from the signed tree head you kept ({@code oldHead}) to the
     * proof's newer head (options {@code new_head} to name another): a verdict as {@link #verifyReceipt}.
     */
    public JsonNode verifyConsistencyProof(JsonNode proof, JsonNode oldHead, JsonNode jwks, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_consistency_proof(text(proof), text(oldHead), text(jwks), optionsText(options), out), out));
    }

    /**
     * Verifies an export of receipt chains (receipt_chain_export's JSON, its JSON Lines text, or a JSON array of
     * receipts): {"valid","chains":[as verifyChain]}.
     */
    public JsonNode verifyChainExport(String exported, JsonNode jwks, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_chain_export(exported, text(jwks), optionsText(options), out), out));
    }

    /** An alias tag: {@code kind} "request" (4 characters) or "stable" (10): {"hmac_sha256","tag"}. */
    public JsonNode aliasTag(String kind, String secretHex, byte[] message) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_alias_tag(kind, secretHex, message, message.length, out), out));
    }

    /** Whether {@code text} is exactly one alias. */
    public boolean isAlias(String text) {
        PointerByReference out = new PointerByReference();
        return "true".equals(result(lib.pr_is_alias(text, out), out));
    }

    /**
     * Verifies a webhook delivery's signature (v1 within the tolerance, v0 fallback), in constant time:
     * {"ok":true} or {"ok":false,"code":...}.
     */
    public JsonNode verifyWebhook(byte[] body, Map<String, String> headers, String secret, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_webhook(body, body.length, text(JSON.valueToTree(headers)), secret, optionsText(options), out), out));
    }

    /** The v3 attestation header for a tokenised request, signed with the device's private JWK. */
    public JsonNode buildAttestation(JsonNode input, JsonNode privateJwk) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_build_attestation(text(input), text(privateJwk), out), out));
    }

    /** A new device key: {"private_jwk","public_jwk",...}. */
    public JsonNode generateDeviceKey() {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_generate_device_key(out), out));
    }

    /**
     * A hash as lowercase hex: {@code kind} "sha256", "json_body_sha256" (of the JCS form of a JSON body),
     * "merkle_leaf" (SHA-256(0x00||data)) or "merkle_node" (SHA-256(0x01||left||right), data the 64 bytes).
     */
    public String hash(String kind, byte[] data) {
        PointerByReference out = new PointerByReference();
        return result(lib.pr_hash(kind, data, data.length, out), out);
    }

    /**
     * A webhook signature header: scheme "v1" ({@code body} the exact text sent; options {@code timestamp}) gives
     * "t=&lt;timestamp&gt;,v1=&lt;hex&gt;", "v0" ({@code body} the payload's JSON text) gives "sha256=&lt;hex&gt;".
     */
    public String signWebhook(String scheme, String body, String secret, Map<String, ?> options) {
        PointerByReference out = new PointerByReference();
        return result(lib.pr_sign_webhook(scheme, body, secret, optionsText(options), out), out);
    }

    /** An RFC 9162 Merkle proof on bare hex hashes, {@code kind} "inclusion" or "consistency": {"valid":bool}. */
    public JsonNode verifyMerkleProof(String kind, JsonNode input) {
        PointerByReference out = new PointerByReference();
        return json(result(lib.pr_verify_merkle_proof(kind, text(input), out), out));
    }

    /** RFC 8785 canonical JSON text of {@code jsonText}. */
    public String canonicalize(String jsonText) {
        PointerByReference out = new PointerByReference();
        return result(lib.pr_canonicalize(jsonText, out), out);
    }

    /** The library's string in {@code out} (freed here); an EngineException when {@code rc} is an error. */
    private String result(int rc, PointerByReference out) {
        Pointer p = out.getValue();
        String s;
        if (p == null) {
            s = null;
        } else {
            try {
                s = p.getString(0, StandardCharsets.UTF_8.name());
            } finally {
                lib.pr_string_free(p);
            }
        }
        if (rc == 0) return s;
        JsonNode error = s == null ? null : json(s).get("error");
        if (error == null) throw new EngineException("internal_error", "The engine failed with code " + rc + " and no error body.", null);
        throw new EngineException(error.path("code").asText("internal_error"), error.path("message").asText(), error.get("details"));
    }

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new EngineException("internal_error", "The engine answered text that is not JSON: " + e.getOriginalMessage(), null);
        }
    }

    private static String text(JsonNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static String optionsText(Map<String, ?> options) {
        return options == null || options.isEmpty() ? null : text(JSON.valueToTree(options));
    }
}
