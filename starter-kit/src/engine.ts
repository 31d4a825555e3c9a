/**
 * The on-device engine, loaded after the page is interactive: the SDK's browser build (tokeniser, built-in name
 * model, attestation, streaming detokeniser, receipt verification) is a separate chunk fetched by `import()`.
 *
 * The client talks to this app's own server (same origin), which adds the gateway key: `keyHeldByServer` makes the
 * SDK send no key of its own, so the page never holds one.
 */
import type { JwksCache, RelayClient } from "@privacy-relay/sdk"
import { deviceKeyPair } from "./keys.ts"

export type Sdk = typeof import("@privacy-relay/sdk")
export type NameModelChoice = "builtin" | "off"

let sdk: Promise<Sdk> | undefined
export const loadSdk = (): Promise<Sdk> =>
  (sdk ??= import("@privacy-relay/sdk").then((loaded) => {
    performance.mark("starter:sdk-loaded")
    return loaded
  }))

export interface Engine {
  readonly sdk: Sdk
  readonly client: RelayClient
  /** The gateway's receipt keys, fetched through this app's server. */
  readonly jwks: JwksCache
}

export const createEngine = async (nameModel: NameModelChoice): Promise<Engine> => {
  const [loaded, deviceKey] = await Promise.all([loadSdk(), deviceKeyPair()])
  const gatewayUrl = location.origin
  // No automatic retries: a refusal is shown at once in plain words, with a Retry button.
  const client = new loaded.RelayClient({ gatewayUrl, keyHeldByServer: true, nameModel, deviceKey, retries: 0 })
  // While the user types: the gateway probe and the name model's first run, so the first message does not wait for
  // them. A failure here is not shown: the first call meets it again and explains it.
  client.warmUp().then(() => performance.mark("starter:warm"), () => {})
  performance.mark("starter:engine-ready")
  return { sdk: loaded, client, jwks: loaded.createJwksCache({ gatewayUrl }) }
}
