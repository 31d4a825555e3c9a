export declare const bytesToHex: (bytes: Uint8Array) => string;
/** Decodes hex (either case). Throws on odd length or a non-hex character. */
export declare const hexToBytes: (hex: string) => Uint8Array;
/** True for exactly 64 lowercase hex characters: the form of every SHA-256 we publish. */
export declare const isSha256Hex: (value: unknown) => value is string;
