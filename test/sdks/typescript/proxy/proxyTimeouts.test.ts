import { describe, expect, it } from "vitest"
import { inProcessTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { startStubbedProxy } from "./stubbedProxy.ts"

const chat = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Say hello." }] })

/** A gateway that never answers: the call ends only when its signal is aborted. */
const silentGateway = (signals: Array<AbortSignal>) => (_input: unknown, init?: RequestInit) =>
  new Promise<Response>((_, reject) => {
    const signal = init!.signal!
    signals.push(signal)
    signal.addEventListener("abort", () => reject(signal.reason), { once: true })
  })

describe("the local proxy's time limits", () => {
  it("a gateway that does not answer within gatewayTimeoutMs: 502 gateway_unreachable, the call's signal aborted with a TimeoutError", async () => {
    const signals: Array<AbortSignal> = []
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off"), log: () => undefined, gatewayTimeoutMs: 150, fetch: silentGateway(signals) })
    const started = performance.now()
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body: chat })
    const waited = performance.now() - started
    expect(res.status).toBe(502)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("gateway_unreachable")
    expect(waited).toBeGreaterThanOrEqual(140)
    expect(signals).toHaveLength(1)
    expect((signals[0]!.reason as DOMException).name).toBe("TimeoutError")
  })

  it("the tokenising budget does not run on into the gateway call: a call slower than TOKENISE_TIMEOUT_MS at the gateway is answered", async () => {
    const proxy = await startStubbedProxy({
      tokeniser: inProcessTokeniser("off"),
      log: () => undefined,
      tokeniseTimeoutMs: 50,
      fetch: async (_input, init) => {
        await new Promise((resolve) => setTimeout(resolve, 200))
        if (init?.signal?.aborted) throw init.signal.reason
        return new Response(JSON.stringify({ choices: [{ message: { role: "assistant", content: "ok" } }] }), { headers: { "content-type": "application/json" } })
      }
    })
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body: chat })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("ok")
  })
})
