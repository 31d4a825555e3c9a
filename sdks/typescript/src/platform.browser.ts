/**
 * Browsers: no files. The device key is a fresh non-extractable key per client unless the app passes its own
 * (`deviceKey`, e.g. kept in IndexedDB); stable aliases use a secret held for the client's lifetime; the gateway key
 * comes as `apiKey` (an app that must not expose its key forwards through its own server instead).
 */
import { generateSigningKeyPair } from "./wire/crypto/ecdsa.ts"
import { ENGINE } from "./client/engine.ts"
import { ConfigurationError } from "./errors.ts"
import type { Platform } from "./platform.ts"

export const browserPlatform: Platform = {
  engine: () => ENGINE,
  deviceKey: () => generateSigningKeyPair({ extractable: false }),
  readApiKeyFile: () => {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: "apiKeyFile is not available in a browser: pass apiKey." })
  },
  stableAliasSecret: async () => crypto.getRandomValues(new Uint8Array(32))
}
