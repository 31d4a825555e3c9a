export declare const CHECK_LABELS: readonly ["schema valid (OpenReceipt v1)", "algorithm allow-listed", "freshness (iat, nbf, exp)", "signature", "chain linkage (seq and prev_hash)"];
export type CheckLabel = (typeof CHECK_LABELS)[number];
export type CheckStatus = "ok" | "fail" | "skipped";
export interface VerificationCheck {
    readonly label: CheckLabel;
    readonly status: CheckStatus;
    readonly detail: string;
}
export interface VerificationResult {
    readonly valid: boolean;
    readonly reason: string | null;
    readonly checks: ReadonlyArray<VerificationCheck>;
}
export interface VerifyReceiptOptions {
    /** The JWKS key for a kid (current or rotated-out); undefined when unknown. Unused for v3. */
    readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined>;
    readonly nowSeconds: number;
    /** The envelope immediately before this one in its chain, when the caller has it. */
    readonly previous?: unknown;
    /** For a countersignature: the v3 attestation it should countersign, when the caller has it. */
    readonly attestation?: unknown;
}
/** Clock skew tolerated for iat and nbf, in seconds. */
export declare const RECEIPT_MAX_SKEW_SECONDS = 300;
/** Verifies one envelope; see the file comment for the checks and statuses. Never throws. */
export declare const verifyReceipt: (envelope: unknown, options: VerifyReceiptOptions) => Promise<VerificationResult>;
/**
 * True when a countersignature verifies with the receipt key its kid names and, when the attestation is given,
 * countersigns exactly that attestation: verifyReceipt's checks, as a boolean.
 */
export declare const verifyCountersignature: (countersignature: unknown, options: {
    readonly resolveKey: VerifyReceiptOptions["resolveKey"];
    readonly attestation?: unknown;
    readonly nowSeconds?: number;
}) => Promise<boolean>;
