import type { EngineIdentity } from "../attestation/v3.ts";
export declare const ENGINE_ID = "relay-ts";
/** The directories, relative to the repository root, whose `.ts` files make up the engine. */
export declare const ENGINE_SOURCE_DIRS: ReadonlyArray<string>;
/** The engine build fingerprint of the sources under `root` (see the module comment for the exact recipe). */
export declare const engineSourceSha256: (root?: string) => string;
/** This engine: id `relay-ts`, the package version, and the source fingerprint. */
export declare const ENGINE: EngineIdentity;
