import type { EngineIdentity } from "./wire/attestation/v3.ts"

/**
 * What differs between the runtimes the SDK runs on. Node and Deno read the gateway key file, keep the device
 * attester key and the stable-alias secret in the user's config directory; a browser keeps nothing on disk (the
 * starter kit stores a non-extractable key in IndexedDB and passes it in).
 */
export interface Platform {
  readonly engine: () => EngineIdentity
  readonly deviceKey: () => Promise<CryptoKeyPair>
  readonly readApiKeyFile: (path: string) => string
  readonly stableAliasSecret: () => Promise<Uint8Array | undefined>
}
