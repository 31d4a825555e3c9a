/** base64url without padding (RFC 4648 section 5): signatures, JWK coordinates, key ids. */
export declare const base64UrlEncode: (bytes: Uint8Array) => string;
/** Strict base64url decode: rejects padding, foreign characters and non-canonical trailing bits. */
export declare const base64UrlDecode: (text: string) => Uint8Array;
/** Standard alphabet, padded (RFC 4648 section 4): the receipt and attestation headers. */
export declare const base64Encode: (bytes: Uint8Array) => string;
/** Strict standard padded base64 decode. */
export declare const base64Decode: (text: string) => Uint8Array;
/** Standard padded base64 of a string's UTF-8 bytes. */
export declare const base64EncodeUtf8: (text: string) => string;
/** Decodes standard padded base64 and reads the bytes as UTF-8 (invalid UTF-8 throws). */
export declare const base64DecodeUtf8: (text: string) => string;
