/**
 * The local proxy's HTTP server with a stand-in gateway (a fetch that records each call and answers a
 * minimal chat completion, or what the test gives it) and, unless the test names another, the tokeniser the
 * proxy runs (worker threads, built-in name model). For tests of the proxy's own behaviour that need no
 * real gateway.
 */
import { afterEach } from "vitest"
import { ENGINE } from "../../../../sdks/typescript/src/client/engine.ts"
import { listenProxyServer, type ProxyDependencies, type RunningProxyServer } from "../../../../sdks/typescript/src/proxy/proxyServer.ts"
import type { RequestTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { workerTokeniser } from "../../../../sdks/typescript/src/proxy/workerTokeniser.ts"
import { generateSigningKeyPair } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"

export interface StubbedProxy extends RunningProxyServer {
  /** URLs of every call the proxy made to the gateway, in order. */
  readonly gatewayCalls: Array<string>
}

const okAnswer = () =>
  new Response(JSON.stringify({ choices: [{ message: { role: "assistant", content: "ok" } }] }), {
    headers: { "content-type": "application/json" }
  })

const running: Array<RunningProxyServer | RequestTokeniser> = []
afterEach(async () => {
  for (const closable of running.splice(0)) await closable.close()
})

export const startStubbedProxy = async (
  overrides: Partial<ProxyDependencies> = {},
  gatewayAnswer: (sentBody: string) => Response = okAnswer
): Promise<StubbedProxy> => {
  const gatewayCalls: Array<string> = []
  const tokeniser = overrides.tokeniser ?? workerTokeniser({ kind: "builtin" })
  running.push(tokeniser)
  const proxy = await listenProxyServer(
    {
      gatewayUrl: "http://gateway.invalid",
      gatewayKey: "svc_test",
      deviceKey: await generateSigningKeyPair(),
      engine: ENGINE,
      tokeniser,
      fetch: async (input, init) => {
        gatewayCalls.push(String(input))
        return gatewayAnswer(init?.body instanceof Uint8Array ? new TextDecoder().decode(init.body) : "")
      },
      ...overrides
    },
    "127.0.0.1",
    0
  )
  running.push(proxy)
  return { ...proxy, gatewayCalls }
}
