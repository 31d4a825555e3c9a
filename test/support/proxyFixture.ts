/**
 * A local proxy in front of a real test gateway and the fake provider, set up the way a user runs it: a funded
 * gateway key in a 0600 key file, a private config directory, the built-in name model. Every request the proxy
 * sends is recorded as it leaves the device (the egress), with a copy of the answer. One copy of the set-up for
 * the proxy, Responses, image-redaction and Claude Code tests.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from "../../programs/fake-provider.ts"
import { startProxy, type StartedProxy } from "../../sdks/typescript/src/proxy/startProxy.ts"
import { startTestGateway, type TestGateway } from "./gateway.ts"
import { fundedKey } from "./tenant.ts"

/** One call the proxy made to the gateway, as it left the device, and what came back. */
export interface Egress {
  readonly url: string
  readonly path: string
  readonly method: string
  readonly headers: Headers
  readonly body: string
  readonly status: number
  readonly responseHeaders: Headers
  /** The answer's text, read alongside the proxy (which reads its own copy). */
  readonly answer: Promise<string>
}

export interface ProxyFixture {
  readonly provider: FakeProvider
  readonly gw: TestGateway
  readonly apiKey: string
  readonly orgId: string
  readonly dir: string
  /** The proxy's environment, for starting another proxy with a setting changed (see startAnother). */
  readonly env: Readonly<Record<string, string>>
  readonly proxy: StartedProxy
  /** Every call the proxies of this fixture made, cleared by reset(). */
  readonly egress: Array<Egress>
  /** The relay calls (POST) among them. */
  readonly relayEgress: () => Array<Egress>
  /** Every body the fake provider received, joined. */
  readonly providerSaw: () => string
  /** A fetch that records into egress, for a proxy started by the test itself. */
  readonly recordingFetch: typeof fetch
  /** Another proxy against the same gateway and key file, with these settings over the fixture's; closed with it. */
  readonly startAnother: (overrides: Readonly<Record<string, string>>) => Promise<StartedProxy>
  /** Forgets recorded calls on both sides (for a beforeEach). */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

export interface ProxyFixtureOptions {
  /** Names the temporary directory, for a reader of /tmp. */
  readonly name: string
  readonly provider?: FakeProviderOptions
  readonly gatewayEnv?: Readonly<Record<string, string>>
  /** Proxy settings over the defaults (PROXY_*, GATEWAY_*, NAME_MODEL, MEDIA_POLICY ...). */
  readonly proxyEnv?: Readonly<Record<string, string>>
}

const bodyText = (body: unknown): string => (body instanceof Uint8Array ? new TextDecoder().decode(body) : String(body ?? ""))

export const startProxyFixture = async (options: ProxyFixtureOptions): Promise<ProxyFixture> => {
  const provider = await startFakeProvider({ port: 0, ...options.provider })
  const gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url, ...options.gatewayEnv })
  const { apiKey, orgId } = await fundedKey(gw)
  const dir = mkdtempSync(join(tmpdir(), `${options.name}-`))
  const keyFile = join(dir, "gateway-key")
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 })
  chmodSync(keyFile, 0o600)

  const egress: Array<Egress> = []
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    const url = String(input)
    egress.push({
      url,
      path: new URL(url).pathname,
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: bodyText(init?.body),
      status: response.status,
      responseHeaders: response.headers,
      answer: response.clone().text()
    })
    return response
  }

  const env: Record<string, string> = {
    PROXY_HOST: "127.0.0.1",
    PROXY_PORT: "0",
    GATEWAY_URL: gw.url,
    GATEWAY_KEY_FILE: keyFile,
    PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
    NAME_MODEL: "builtin",
    ...options.proxyEnv
  }
  const others: Array<StartedProxy> = []
  const proxy = await startProxy(env, { fetch: recordingFetch })

  return {
    provider,
    gw,
    apiKey,
    orgId,
    dir,
    env,
    proxy,
    egress,
    relayEgress: () => egress.filter((e) => e.method === "POST"),
    providerSaw: () => provider.received.map((r) => r.body.toString("utf8")).join("\n"),
    recordingFetch,
    startAnother: async (overrides) => {
      const another = await startProxy({ ...env, ...overrides }, { fetch: recordingFetch })
      others.push(another)
      return another
    },
    reset: () => {
      provider.reset()
      egress.length = 0
    },
    close: async () => {
      for (const p of [...others, proxy]) await p.close().catch(() => undefined)
      await gw.close()
      await provider.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
