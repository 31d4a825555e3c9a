/** Node and Deno: files in the user's config directory (see docs of the local proxy, which shares them). */
import { loadOrCreateAliasSecret } from "./client/aliasSecret.ts"
import { loadOrCreateDeviceKey } from "./client/deviceKey.ts"
import { ENGINE } from "./client/engine.ts"
import { readGatewayKeyFile } from "./client/gatewayKeyFile.ts"
import { ProxyStartError } from "./client/ProxyStartError.ts"
import { ConfigurationError } from "./errors.ts"
import type { Platform } from "./platform.ts"

const configurationError = (error: unknown) =>
  error instanceof ProxyStartError ? new ConfigurationError({ status: 0, code: "configuration_error", message: error.message, cause: error }) : error

export const nodePlatform: Platform = {
  engine: () => ENGINE,
  deviceKey: async () => {
    try {
      return await loadOrCreateDeviceKey(process.env)
    } catch (error) {
      throw configurationError(error)
    }
  },
  readApiKeyFile: (path) => {
    try {
      return readGatewayKeyFile(path)
    } catch (error) {
      throw configurationError(error)
    }
  },
  stableAliasSecret: async () => {
    try {
      return loadOrCreateAliasSecret(process.env)
    } catch (error) {
      throw configurationError(error)
    }
  }
}
