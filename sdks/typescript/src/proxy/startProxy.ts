/**
 * Starts the local proxy from its settings (environment or PROXY_CONFIG), checking everything a user
 * can get wrong before listening: the gateway URL (https or loopback, answers the identity probe), the
 * gateway key file (present, 0600), the device attester key, the name model setting, the port.
 * Every failure is a ProxyStartError with a message that says how to fix it.
 */
import type { EngineIdentity } from "../wire/attestation/v3.ts"
import { loadOrCreateAliasSecret } from "../client/aliasSecret.ts"
import { loadOrCreateDeviceKey } from "../client/deviceKey.ts"
import { ENGINE } from "../client/engine.ts"
import { readGatewayKeyFile } from "../client/gatewayKeyFile.ts"
import { probeGateway } from "../client/gatewayUrl.ts"
import { loadProxySettings, type NameModelSetting } from "./proxyConfig.ts"
import { listenProxyServer, type RunningProxyServer } from "./proxyServer.ts"
import { workerTokeniser } from "./workerTokeniser.ts"

export interface StartedProxy extends RunningProxyServer {
  readonly gatewayUrl: string
  readonly nameModel: NameModelSetting
}


export const startProxy = async (
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly fetch?: typeof fetch; readonly engine?: EngineIdentity } = {}
): Promise<StartedProxy> => {
  // Every setting first: a bad value stops the proxy here, before any key is read or anything listens.
  const settings = loadProxySettings(env)
  const gatewayUrl = settings.gatewayUrl
  const gatewayKey = readGatewayKeyFile(settings.gatewayKeyFile)
  const deviceKey = await loadOrCreateDeviceKey(env)
  await probeGateway(gatewayUrl, { fetch: options.fetch })
  // The device-held alias secret: stable embedding aliases (unless per-request) and byte-identical idempotent retries.
  const aliasSecret = loadOrCreateAliasSecret(env)
  const tokeniser = workerTokeniser(settings.nameModel, {
    stableAliasSecret: settings.embeddingAliases === "stable" ? aliasSecret : undefined,
    // End-user identifiers (user, metadata values, messages[].name): the same alias from this device, every time.
    identifierSecret: aliasSecret,
    mediaPolicy: settings.mediaPolicy,
    passthroughPaths: settings.passthroughPaths
  })
  const server = await listenProxyServer(
    {
      gatewayUrl,
      gatewayKey,
      deviceKey,
      engine: options.engine ?? ENGINE,
      tokeniser,
      tokeniseTimeoutMs: settings.tokeniseTimeoutMs,
      streaming: settings.streaming,
      aliasSecret,
      fileLimits: { maxBytes: settings.fileMaxBytes },
      fetch: options.fetch
    },
    settings.host,
    settings.port
  ).catch(async (error: unknown) => {
    await tokeniser.close()
    throw error
  })
  return {
    ...server,
    gatewayUrl,
    nameModel: settings.nameModel,
    close: () => Promise.all([server.close(), tokeniser.close()]).then(() => undefined)
  }
}
