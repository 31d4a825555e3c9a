import type { CountryCode } from "libphonenumber-js/max";
import type { Detector } from "./detectors/Detector.ts";
import type { NameModel } from "./NameModel.ts";
import type { AliasMap, EntityType } from "./types.ts";
export interface SessionOptions {
    /** Name model: the built-in on-device model by default; "off" disables name detection. */
    readonly names?: NameModel | "off";
    /** When true, a failing name model is skipped (structured types are still tokenised). Default false. */
    readonly failOpen?: boolean;
    /** The per-request secret the alias tags derive from. Default: 32 fresh random bytes. */
    readonly secret?: Uint8Array;
    /**
     * Stable aliases: each alias is derived from the value itself under this secret (HMAC-SHA256), so the same value
     * gets the same alias in every request made with the same secret (repeatable embeddings). The secret must stay on
     * the device (never sent, never logged). Trade-off: the provider can link one value across calls. Default: unset,
     * per-request aliases.
     */
    readonly stableAliasSecret?: Uint8Array;
    /** Regions whose national phone formats are recognised. */
    readonly phoneRegions?: ReadonlyArray<CountryCode>;
}
/** Everything that belongs to ONE request: its secret, its aliases, its counters. Never reuse across requests. */
export interface TokeniserSession {
    readonly names: NameModel | "off";
    readonly failOpen: boolean;
    readonly detectors: ReadonlyArray<Detector>;
    /** Alias -> original, for detokenising this request's responses. */
    readonly map: AliasMap;
    /** Categories and how many values of each were replaced (never the values). */
    readonly detectorsFired: Readonly<Record<string, number>>;
    /** True when the name model failed and failOpen let the request proceed without names. */
    readonly nameModelSkipped: boolean;
    /** Registers text of this request so that no alias can equal a string already present in it. */
    readonly observe: (text: string) => void;
    /** The alias of `value` as `type`; the same pair always gets the same alias within the session. */
    readonly aliasFor: (type: EntityType, value: string) => Promise<string>;
    readonly countFired: (type: EntityType) => void;
    readonly markNameModelSkipped: () => void;
}
export declare const createSession: (opts?: SessionOptions) => TokeniserSession;
