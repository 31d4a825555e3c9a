import { type V3Envelope } from "../attestation/v3.ts";
import { type Signer } from "./signer.ts";
export type CountersignWitness = "relayed" | "asserted";
export interface V3Countersignature {
    readonly v: "v3-countersignature";
    readonly alg: "ES256";
    readonly kid: string;
    readonly iss: string;
    readonly jti: string;
    readonly iat: number;
    readonly timestamp: string;
    readonly attestation_jti: string;
    /** envelopeHash (SHA-256 hex of the JCS bytes, sig included) of the countersigned attestation. */
    readonly attestation_sha256: string;
    /** The attested egress hash; equals hash_upstream_request because the gateway relays the body unchanged. */
    readonly egress_sha256: string;
    readonly provider: string;
    readonly model: string;
    readonly hash_upstream_request: string;
    readonly hash_upstream_response: string;
    readonly witness: CountersignWitness;
    readonly receipt_jti: string | null;
    readonly sig: string;
}
export interface CountersignInput {
    /** A v3 envelope whose client signature the caller has already verified (verifyV3Signature). */
    readonly attestation: V3Envelope;
    readonly provider: string;
    readonly model: string;
    readonly hashUpstreamRequest: string;
    readonly hashUpstreamResponse: string;
    /** The gateway's PUBLIC_BASE_URL. */
    readonly iss: string;
    readonly signer: Signer;
    /** Default "relayed" (the relay path). */
    readonly witness?: CountersignWitness;
    readonly receiptJti?: string | null;
    readonly now?: Date;
}
/**
 * Builds and signs the countersignature. Throws TypeError when the attestation is not a v3 envelope, a
 * hash is not 64 lowercase hex, or hash_upstream_request differs from the attested egress_sha256 (the
 * body relayed must be the body attested).
 */
export declare const countersignAttestation: (input: CountersignInput) => Promise<V3Countersignature>;
/** The first member of a countersignature with the wrong type (or a broken invariant), else null. */
export declare const countersignatureShapeProblem: (e: Record<string, unknown>) => string | null;
