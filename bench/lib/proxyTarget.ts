/**
 * The user's real path (issue 24 (g)/(h)): the local proxy (`programs/proxy.ts`) in front of the gateway, started the
 * way docs/proxy.md says a user starts it: settings in the environment, the gateway key in a 0600 file, the device
 * key and alias secret in their own config directory (a fresh temporary one per proxy). The load generator then
 * sends plain OpenAI chat completions ("Say hello."-sized) to the proxy, which tokenises, attests and relays each one.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BENCH_MODEL } from "./attested.ts"
import { type ServerProcess, startNodeProcess, waitForUrlLine } from "./processes.ts"

export type ProxyNames = "off" | "builtin"

export interface ProxyTarget {
  readonly process: ServerProcess
  readonly url: string
  readonly cleanup: () => void
}

export const startProxyTarget = async (input: {
  readonly root: string
  readonly names: ProxyNames
  readonly gatewayUrl: string
  readonly apiKey: string
  readonly env: Record<string, string | undefined>
  readonly nodeFlags?: ReadonlyArray<string>
}): Promise<ProxyTarget> => {
  const dir = mkdtempSync(join(tmpdir(), `relay-bench-proxy-${input.names}-`))
  chmodSync(dir, 0o700)
  const keyFile = join(dir, "gateway-key")
  writeFileSync(keyFile, `${input.apiKey}\n`, { mode: 0o600 })
  const configDir = join(dir, "config")
  const proc = startNodeProcess(`proxy (names ${input.names})`, join(input.root, "programs", "proxy.ts"), {
    ...input.env,
    PROXY_HOST: "127.0.0.1",
    PROXY_PORT: "0",
    GATEWAY_URL: input.gatewayUrl,
    GATEWAY_KEY_FILE: keyFile,
    NAME_MODEL: input.names,
    PRIVACY_RELAY_CONFIG_DIR: configDir
  }, input.nodeFlags)
  const url = await waitForUrlLine(proc, 60_000)
  return { process: proc, url, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** What an OpenAI client sends to the proxy: a short chat turn, no personal data, the client's ignored key. */
export const proxyBody = (n: number, stream: boolean): Buffer =>
  Buffer.from(JSON.stringify({
    model: BENCH_MODEL,
    stream,
    messages: [{ role: "user", content: n % 2 === 0 ? "Say hello." : "Say hello!" }]
  }))

export const PROXY_HEADERS: Readonly<Record<string, string>> = { "content-type": "application/json", authorization: "Bearer unused" }
