/**
 * The on-device half of every private call: tokenise the body (detect -> alias), attest the exact egress bytes with
 * the device key, and later restore the originals in the answer. Portable: WebCrypto only.
 */
import { type AttestationRoute, type EngineIdentity } from "../../../src/attestation/v3.ts";
import { type AliasMap, type NameModel } from "../../../src/tokeniser/index.ts";
/** `builtin` (the default), `off`, or the http(s) URL of a name model service. */
export type NameModelSetting = "builtin" | "off" | (string & {});
export interface Engine {
    readonly identity: EngineIdentity;
    readonly deviceKey: () => Promise<CryptoKeyPair>;
    readonly names: NameModel | "off";
    /** Present when stable aliases may be used (embeddings by default); never leaves the device. */
    readonly stableAliasSecret: (() => Promise<Uint8Array | undefined>) | undefined;
}
export declare const nameModelOf: (setting: NameModelSetting | undefined, fetchImpl?: typeof fetch) => NameModel | "off";
/** What leaves the device for one call, and what stays to restore the answer. */
export interface PreparedCall {
    readonly bodyBytes: Uint8Array;
    /** `X-Service-Engine` and `X-Service-Attestation`. */
    readonly headers: Readonly<Record<string, string>>;
    /** Alias -> original; stays on the device. */
    readonly map: AliasMap;
    /** The tokenised body (what the provider will see), for display ("what left your device"). */
    readonly tokenisedBody: unknown;
    readonly detectorsFired: Readonly<Record<string, number>>;
}
/** Tokenises and attests one relay body. Throws NameModelUnavailableError (fail-closed) or InvalidRequestError. */
export declare const prepareCall: (engine: Engine, route: AttestationRoute, body: unknown) => Promise<PreparedCall>;
