export type EngineAllowlist = ReadonlyArray<{
    /** Official ids are `relay-<language>`, e.g. `relay-ts`. */
    readonly id: string;
    /** Lowest accepted version (semver). */
    readonly minVersion: string;
    /** When present and non-empty, the attested engine.sha256 must be one of these. */
    readonly sha256?: ReadonlyArray<string>;
}>;
export declare const DEFAULT_ENGINE_ALLOWLIST: EngineAllowlist;
export interface EngineHeader {
    readonly id: string;
    readonly version: string;
}
/** The X-Service-Engine value for an engine. */
export declare const engineHeaderValue: (engine: {
    readonly id: string;
    readonly version: string;
}) => string;
/** Parses `<id>/<semver>`; undefined when the value is not of that form. */
export declare const parseEngineHeader: (value: string) => EngineHeader | undefined;
export type EngineAllowlistDecision = {
    readonly ok: true;
    readonly engine: EngineHeader;
    readonly entry: EngineAllowlist[number];
} | {
    readonly ok: false;
    readonly message: string;
};
/** Decides whether the X-Service-Engine header names an allowed engine at an allowed version. */
export declare const checkEngineAllowlist: (headerValue: string | undefined, allowlist: EngineAllowlist) => EngineAllowlistDecision;
