/**
 * The JCS text of a JSON value (sorted keys by UTF-16 code units, ECMAScript number form, no
 * insignificant whitespace). Throws for values JSON cannot represent (undefined, functions,
 * NaN/Infinity, bigint, lone surrogates, cycles).
 */
export declare const canonicalString: (value: unknown) => string;
/** The UTF-8 bytes of the JCS text: exactly what gets hashed and signed. */
export declare const canonicalBytes: (value: unknown) => Uint8Array;
/** SHA-256 as bare lowercase hex. A string argument is hashed as its UTF-8 bytes. */
export declare const sha256Hex: (input: Uint8Array | string) => Promise<string>;
/** SHA-256 hex of the JCS bytes of a value. */
export declare const jcsSha256Hex: (value: unknown) => Promise<string>;
/**
 * Parses a JSON document given as raw UTF-8 bytes (a request body). Throws on invalid UTF-8 or JSON.
 */
export declare const parseJsonBytes: (bytes: Uint8Array) => unknown;
/**
 * SHA-256 hex of the JCS form of a JSON body given as bytes: `hash_upstream_request` and the
 * attestation's `egress_sha256`. Key order and whitespace between tokens do not change it;
 * whitespace inside strings does. Throws when the bytes are not a JSON document.
 */
export declare const jsonBodySha256Hex: (bodyBytes: Uint8Array) => Promise<string>;
