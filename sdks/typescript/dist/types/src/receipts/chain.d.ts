/** The `prev_hash` of the first receipt (seq 1) of every chain. */
export declare const GENESIS_PREV_HASH: string;
export interface ChainLink {
    readonly chain_id: string;
    /** Starts at 1 and increases by one per receipt in the chain. */
    readonly seq: number;
    /** envelopeHash of the previous receipt in the same chain; GENESIS_PREV_HASH for seq 1. */
    readonly prev_hash: string;
}
/** Chain of completed-call v2 receipts of an organisation. */
export declare const v2ChainId: (orgId: string) => string;
/** Chain of v1 receipts (the stored chain) of an account. */
export declare const v1ChainId: (accountId: string) => string;
/** Chain of failed-call receipts of an organisation. */
export declare const failedChainId: (orgId: string) => string;
/**
 * SHA-256 hex of the JCS bytes of the whole envelope, signature included: the next receipt's
 * `prev_hash`. Including the signature means a re-signed receipt breaks the link too.
 */
export declare const envelopeHash: (envelope: object) => Promise<string>;
/** 128 random bits as 32 lowercase hex characters (receipt and attestation `jti`). */
export declare const newJti: () => string;
/** RFC 3339 UTC timestamp with millisecond precision and `Z`, e.g. 2024-01-02T03:04:05.006Z. */
export declare const rfc3339Millis: (date: Date) => string;
/** Unix seconds of a date (what `iat` carries). */
export declare const unixSeconds: (date: Date) => number;
