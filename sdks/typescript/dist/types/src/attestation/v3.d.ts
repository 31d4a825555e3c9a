import { type PublicJwk } from "../crypto/ecdsa.ts";
import { engineHeaderValue, type EngineAllowlist } from "./engine-allowlist.ts";
export { engineHeaderValue };
export type AttestationRoute = "chat.completions" | "messages" | "embeddings";
export declare const ATTESTATION_ROUTES: ReadonlyArray<AttestationRoute>;
export interface EngineIdentity {
    readonly id: string;
    readonly version: string;
    /** SHA-256 hex of the engine build (pinned by the allowlist when it lists hashes). */
    readonly sha256: string;
}
export interface V3AttestationClaims {
    readonly route: AttestationRoute;
    /** SHA-256 hex of the JCS form of the exact request body sent. */
    readonly egress_sha256: string;
    /** Detector categories that fired and their counts; never the values. */
    readonly detectors_fired: Readonly<Record<string, number>>;
    readonly engine: EngineIdentity;
    readonly trust_tier: string;
    /** The key that signed this envelope, so it verifies offline without a key fetch. */
    readonly attester_public_key: PublicJwk;
}
export interface V3Envelope {
    readonly v: "v3";
    readonly alg: "ecdsa-p256-sha256";
    readonly jti: string;
    readonly iat: number;
    readonly claims: {
        readonly "v3-attestation": V3AttestationClaims;
    };
    /** base64url raw r||s over the JCS bytes of the envelope without `sig`. */
    readonly sig: string;
}
/** Largest clock difference between the attester and the gateway, in seconds. */
export declare const ATTESTATION_MAX_SKEW_SECONDS = 300;
export declare const DEFAULT_TRUST_TIER = "self-attested";
/** Signs the attestation for one egress body. Throws when `bodyBytes` is not a JSON document. */
export declare const buildAttestation: (input: {
    readonly route: AttestationRoute;
    /** The exact body that will be sent. */
    readonly bodyBytes: Uint8Array;
    readonly detectorsFired: Readonly<Record<string, number>>;
    readonly engine: EngineIdentity;
    readonly trustTier?: string;
    readonly keyPair: CryptoKeyPair;
    readonly now?: Date;
}) => Promise<V3Envelope>;
/** X-Service-Attestation value: standard padded base64 of the envelope JSON. */
export declare const encodeAttestationHeader: (envelope: V3Envelope) => string;
/** Decodes the header to JSON; throws when it is not padded base64 of UTF-8 JSON. Shape unchecked. */
export declare const decodeAttestationHeader: (headerValue: string) => unknown;
/** Why `value` is not a v3 envelope, or null when it is one. Extra members are allowed (they are signed). */
export declare const v3EnvelopeShapeProblem: (value: unknown) => string | null;
/**
 * The two primitives the attestation check needs, injectable so a runtime with faster ones (the Node gateway:
 * synchronous node:crypto with cached keys, layers/crypto/nodeAttestationCrypto.ts) can supply them while this
 * file stays portable. Either may answer synchronously or with a promise.
 */
export interface AttestationCrypto {
    /** ES256 over `bytes` with raw r||s `signature`; false for anything malformed. */
    verifyEs256(jwk: PublicJwk, signature: Uint8Array, bytes: Uint8Array): boolean | Promise<boolean>;
    /** SHA-256 hex of the JCS form of a JSON body; throws when the bytes are not a JSON document. */
    jsonBodySha256Hex(bodyBytes: Uint8Array): string | Promise<string>;
}
/** The portable default: WebCrypto, importing the embedded key on every call (Node, Deno, browsers). */
export declare const webCryptoAttestationCrypto: AttestationCrypto;
/** Verifies the envelope's `sig` against its embedded attester_public_key. Never throws. */
export declare const verifyV3Signature: (envelope: V3Envelope, backend?: AttestationCrypto) => Promise<boolean>;
export type AttestationVerdict = {
    readonly ok: true;
    readonly attestation: V3Envelope;
    readonly engine: EngineIdentity;
} | {
    readonly ok: false;
    readonly status: 403;
    readonly code: "engine_untrusted";
    readonly message: string;
} | {
    readonly ok: false;
    readonly status: 428;
    readonly code: "pretokenised_required";
    readonly message: string;
};
/**
 * The gateway's fail-closed check for a relay request. First the engine gate (403 engine_untrusted),
 * then the attestation (428 pretokenised_required): present, decodable, well-shaped, signed by its
 * embedded key, attesting this route, this engine (and a pinned build hash when the allowlist entry
 * pins hashes), fresh within 300 s, and bound to exactly this body. Messages name the failed check
 * and never echo body content.
 */
export declare const verifyAttestation: (input: {
    readonly header: string | undefined;
    readonly engineHeader: string | undefined;
    readonly route: AttestationRoute;
    readonly bodyBytes: Uint8Array;
    readonly nowSeconds: number;
    readonly allowlist?: EngineAllowlist;
    /** Signature and body-hash primitives; WebCrypto when absent. */
    readonly crypto?: AttestationCrypto;
}) => Promise<AttestationVerdict>;
