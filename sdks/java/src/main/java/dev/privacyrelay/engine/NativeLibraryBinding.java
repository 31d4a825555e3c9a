package dev.privacyrelay.engine;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/**
 * The engine's C ABI (sdks/rust/ffi/include/privacy_relay.h), as JNA binds it: strings in as UTF-8, every result a
 * library-allocated string in {@code out} that {@link #pr_string_free} releases. Internal: {@link Engine} is the API.
 */
interface NativeLibraryBinding extends Library {
    int pr_abi_version();

    int pr_engine_info(PointerByReference out);

    int pr_tokenise_request(String route, String bodyJson, String optionsJson, PointerByReference out);

    int pr_tokenise_text(String text, String optionsJson, PointerByReference out);

    int pr_detect_spans(String text, String optionsJson, PointerByReference out);

    int pr_detokenise(String text, String mapJson, PointerByReference out);

    int pr_detokeniser_new(String mapJson, PointerByReference handle, PointerByReference out);

    int pr_detokeniser_push(Pointer handle, String chunk, PointerByReference out);

    int pr_detokeniser_finish(Pointer handle, PointerByReference out);

    void pr_detokeniser_free(Pointer handle);

    int pr_verify_receipt(String receipt, String jwksJson, String optionsJson, PointerByReference out);

    int pr_verify_chain(String receiptsJson, String jwksJson, String optionsJson, PointerByReference out);

    int pr_verify_inclusion_proof(String proofJson, String sthJson, String jwksJson, String optionsJson, PointerByReference out);

    int pr_verify_consistency_proof(String proofJson, String oldHeadJson, String jwksJson, String optionsJson, PointerByReference out);

    int pr_verify_chain_export(String exported, String jwksJson, String optionsJson, PointerByReference out);

    int pr_alias_tag(String kind, String secretHex, byte[] message, long len, PointerByReference out);

    int pr_is_alias(String text, PointerByReference out);

    /** body_len is a size_t: 64 bits on the LP64 platforms the jar carries a library for. */
    int pr_verify_webhook(byte[] body, long bodyLen, String headersJson, String secret, String optionsJson, PointerByReference out);

    int pr_build_attestation(String inputJson, String privateJwkJson, PointerByReference out);

    int pr_generate_device_key(PointerByReference out);

    int pr_canonicalize(String jsonText, PointerByReference out);

    int pr_hash(String kind, byte[] data, long len, PointerByReference out);

    int pr_sign_webhook(String scheme, String body, String secret, String optionsJson, PointerByReference out);

    int pr_verify_merkle_proof(String kind, String inputJson, PointerByReference out);

    void pr_string_free(Pointer s);
}
