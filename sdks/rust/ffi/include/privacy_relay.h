/*
 * privacy_relay.h: the C ABI of the Privacy Relay on-device engine (library privacy_relay, Rust crate
 * sdks/rust/ffi). It is the one surface the Go, Java, PHP and Ruby SDKs bind.
 *
 * Conventions (every function):
 *  - Inputs are NUL-terminated UTF-8 strings; "..._json" arguments are JSON text. An options_json may be NULL
 *    or "" (no options). Unknown option names are refused (invalid_argument).
 *  - The return value is 0 (PR_OK) or one of the PR_E_* numbers below; each number has a stable code name
 *    (pr_error_code_name).
 *  - Results are written to *out as a string the library allocated (JSON text unless the function says "text").
 *    On failure *out receives {"error":{"code":"<code name>","message":"...","details":{...}?}} instead, so a
 *    binding whose calls may move between threads (Go) never needs pr_last_error. Free every string the library
 *    returns with pr_string_free, exactly once.
 *  - No panic, exception or abort crosses the boundary: an unexpected failure inside the engine returns
 *    PR_E_INTERNAL (internal_error).
 *  - Verification verdicts are results, not errors: an invalid receipt is {"valid":false,...} with PR_OK, a
 *    rejected webhook is {"ok":false,"code":...} with PR_OK. Errors are about the arguments.
 *  - Functions are thread-safe, except that one pr_detokeniser handle must be used by one thread at a time.
 *  - Offsets in pr_detect_spans are UTF-16 code units (start/end, as in sdks/vectors) and UTF-8 bytes
 *    (byte_start/byte_end).
 */
#ifndef PRIVACY_RELAY_H
#define PRIVACY_RELAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PR_ABI_VERSION 1

#define PR_OK 0
#define PR_E_NULL_ARGUMENT 1      /* null_argument: a required pointer is NULL */
#define PR_E_INVALID_UTF8 2       /* invalid_utf8: a string argument is not UTF-8 (lone surrogates included) */
#define PR_E_INVALID_JSON 3       /* invalid_json: a _json argument is not JSON text */
#define PR_E_INVALID_ARGUMENT 4   /* invalid_argument: well-formed but not acceptable (unknown route, option...) */
#define PR_E_INVALID_REQUEST 5    /* invalid_request: the request body is not what the route takes (HTTP 400) */
#define PR_E_UNSUPPORTED_FIELD 6  /* unsupported_field: the egress policy refuses a field; details.path (HTTP 400) */
#define PR_E_JWKS 7               /* jwks_invalid: the JWKS is not one; nothing was verified */
#define PR_E_INVALID_KEY 8        /* invalid_key: the device key is not a P-256 private JWK */
#define PR_E_UNSUPPORTED_CONTENT 9 /* unsupported_content: media the client will not send; details.path, kind (HTTP 415) */
#define PR_E_NESTING_TOO_DEEP 10  /* nesting_too_deep: the body nests past 64 levels; details.path (HTTP 400) */
#define PR_E_INTERNAL 100         /* internal_error: the engine failed unexpectedly (a bug; report it) */

typedef struct PrDetokeniser pr_detokeniser;

/* The ABI version of the loaded library; compare with PR_ABI_VERSION. */
int pr_abi_version(void);

/* {"id":"relay-rs","version","sha256" (the core build: the attestation's engine.sha256),"abi_version",
 *  "routes","entity_types","name_models","default_phone_regions","gazetteer":{...}} */
int pr_engine_info(char **out);

/* Tokenises one request body before it leaves the device, under the egress policy (sdks/vectors/egress-policy.json,
 * built in): user text tokenised, end-user identifiers (user, metadata values, messages[].name...) replaced by
 * device-stable USER_ aliases, structure passed, anything else refused (unsupported_field, unsupported_content,
 * nesting_too_deep with details {"path", "kind"?, "setting"?}); nothing may be sent after a refusal.
 * route: "chat.completions" | "messages" | "messages.count_tokens" | "embeddings" | "responses".
 * body_json: the request body (a JSON object).
 * options_json: {"names":"builtin"|"off" (default builtin), "secret_hex" (per-request alias secret; default
 *   random), "stable_alias_secret_hex" (device-stable aliases), "phone_regions":["US",...],
 *   "device_alias_secret_hex" + "idempotency_key" (a retry with the same key tokenises to the same bytes),
 *   "identifier_secret_hex" (the USER_ aliases' secret; default device_alias_secret_hex, else random per request),
 *   "media_policy":"refuse"|"pass"|"redact" (MEDIA_POLICY; this engine has no image redactor),
 *   "passthrough_paths":["/messages/ * /x_trace"] (PASSTHROUGH_PATHS: JSON pointers, "*" for one segment)}.
 * *out: {"body":{...},"body_text":"<RFC 8785 text: send exactly these bytes>","map":[["<EMAIL_1_k3f9>","a@b.c"],...],
 *        "passthrough":[{"path","kind"}] (the attestation's passthrough claim; [] = none),
 *        "detectors_fired":{"EMAIL":1,"USER":1},"name_model_skipped":false}. Keep "map" on the device. */
int pr_tokenise_request(const char *route, const char *body_json, const char *options_json, char **out);

/* Tokenises one text: *out {"text","map","detectors_fired"}. */
int pr_tokenise_text(const char *text, const char *options_json, char **out);

/* The values found in text: *out {"spans":[{"start","end","type","value","byte_start","byte_end"}]}. */
int pr_detect_spans(const char *text, const char *options_json, char **out);

/* Restores the originals of map_json's aliases in text. map_json: [[alias, original],...] or {alias: original}.
 * *out: text. */
int pr_detokenise(const char *text, const char *map_json, char **out);

/* Streaming detokenisation of one response whose chunks may cut an alias in two.
 * new: *out_handle the handle, *out "{}" (or the error JSON). push: *out the text safe to show now (text, maybe
 * empty). finish: *out what was held back (text). free: releases the handle (NULL is ignored). */
int pr_detokeniser_new(const char *map_json, pr_detokeniser **out_handle, char **out);
int pr_detokeniser_push(pr_detokeniser *detokeniser, const char *chunk, char **out);
int pr_detokeniser_finish(pr_detokeniser *detokeniser, char **out);
void pr_detokeniser_free(pr_detokeniser *detokeniser);

/* Offline verification of a receipt (v1, v2, failed v2, v3 countersignature) or a v3 attestation.
 * receipt: the X-Service-Receipt-* / X-Service-Attestation header value, or the envelope's JSON text.
 * jwks_json: the gateway's JWKS ({"keys":[...]}). options_json: {"now_seconds", "previous", "attestation"}.
 * *out: {"valid":bool,"reason":string|null,"checks":[{"label","status":"ok"|"fail"|"skipped","detail"}]} */
int pr_verify_receipt(const char *receipt, const char *jwks_json, const char *options_json, char **out);

/* A chain of receipts in chain order (receipts_json: array). options_json: {"now_seconds","allow_gaps"}.
 * *out: {"valid","chain_id","first_seq","last_seq","count","verified",
 *        "break":null|{"index","seq","jti","kind":"gap"|"reorder"|"duplicate"|"substituted"|"other_chain"|"tampered"|
 *        "invalid"|"unchained","reason","result"},"gaps":[{"index","after_seq","seq"}]} */
int pr_verify_chain(const char *receipts_json, const char *jwks_json, const char *options_json, char **out);

/* A transparency-log inclusion proof against a signed tree head (sth_json NULL: the proof's own "sth").
 * options_json: {"receipt": header value, JSON text or object}. *out: as pr_verify_receipt. */
int pr_verify_inclusion_proof(const char *proof_json, const char *sth_json, const char *jwks_json,
                              const char *options_json, char **out);

/* A transparency-log consistency proof from the signed head you kept (old_head_json) to a newer one
 * (options_json: {"new_head"}; default the proof's "sth"). *out: as pr_verify_receipt (checks "old tree head",
 * "new tree head", "proof schema", "consistency"). */
int pr_verify_consistency_proof(const char *proof_json, const char *old_head_json, const char *jwks_json,
                                const char *options_json, char **out);

/* An export of receipt chains: receipt_chain_export's JSON, its JSON Lines text, or a JSON array of receipts.
 * options_json: {"now_seconds","allow_gaps"}. *out: {"valid","chains":[as pr_verify_chain]} */
int pr_verify_chain_export(const char *exported, const char *jwks_json, const char *options_json, char **out);

/* A webhook delivery: body/body_len exactly as received, headers_json {"X-Service-Signature": "...", ...},
 * secret the endpoint's secret. options_json: {"tolerance_seconds":300,"now_seconds"}.
 * *out: {"ok":true} | {"ok":false,"code":"missing_headers"|"malformed_header"|"bad_signature"|
 *        "stale_timestamp"|"malformed_body"|"missing_secret","message"} */
int pr_verify_webhook(const uint8_t *body, size_t body_len, const char *headers_json, const char *secret,
                      const char *options_json, char **out);

/* Builds and signs the v3 attestation (X-Service-Attestation) of one egress body.
 * input_json: {"route","body" (the text sent),"body_is_canonical" (true for pr_tokenise_request's body_text),
 *   "detectors_fired","engine":{"id","version","sha256"} (default relay-rs; bindings name theirs, e.g. relay-go,
 *   with this library's sha256),"trust_tier","jti","iat","passthrough","deterministic"}.
 * private_jwk_json: the device key. *out: {"envelope":{...},"header":"<base64>","engine_header":"relay-go/0.1.0"} */
int pr_build_attestation(const char *input_json, const char *private_jwk_json, char **out);

/* A fresh P-256 device key: *out {"private_jwk","public_jwk","kid"}. */
int pr_generate_device_key(char **out);

/* The RFC 8785 (JCS) text of json_text: *out text. */
int pr_canonicalize(const char *json_text, char **out);

/* A hash of data/len as lowercase hex: kind "sha256", "json_body_sha256" (of the JCS form of a JSON body),
 * "merkle_leaf" (SHA-256(0x00||data)), "merkle_node" (SHA-256(0x01||left||right); data is the 64 bytes). */
int pr_hash(const char *kind, const uint8_t *data, size_t len, char **out);

/* A webhook signature header: scheme "v1" (body the exact text sent; options_json {"timestamp"}: *out
 * "t=<timestamp>,v1=<hex>") or "v0" (body the payload's JSON text: *out "sha256=<hex>" of its JCS form). */
int pr_sign_webhook(const char *scheme, const char *body, const char *secret, const char *options_json, char **out);

/* An alias tag: kind "request" (4 characters) or "stable" (10), HMAC-SHA256 of message/len under secret_hex.
 * *out {"hmac_sha256","tag"}. */
int pr_alias_tag(const char *kind, const char *secret_hex, const uint8_t *message, size_t len, char **out);

/* Whether text is exactly one alias: *out "true" or "false". */
int pr_is_alias(const char *text, char **out);

/* An RFC 9162 Merkle proof on bare hex hashes: kind "inclusion" (input_json {"leaf_index","tree_size",
 * "leaf_hash","root_hash","audit_path"}) or "consistency" ({"first","second","first_root","second_root",
 * "consistency_path"}). *out {"valid":bool} (hashes that are not hex make it invalid). */
int pr_verify_merkle_proof(const char *kind, const char *input_json, char **out);

/* Frees a string returned by this library (NULL is ignored). */
void pr_string_free(char *s);

/* The error JSON of the last failed call on this thread, or NULL; free it with pr_string_free. */
char *pr_last_error(void);

/* The stable code name of an error number; a static string (do not free). */
const char *pr_error_code_name(int number);

/* Panics inside the library on purpose; returns PR_E_INTERNAL. For bindings' tests of the error path. */
int pr_debug_panic(char **out);

#ifdef __cplusplus
}
#endif

#endif /* PRIVACY_RELAY_H */
