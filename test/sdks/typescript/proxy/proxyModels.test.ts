import { request } from "node:http"
import { describe, expect, it } from "vitest"
import type { LogAnnotations } from "../../../../sdks/typescript/src/proxy/proxyLog.ts"
import { inProcessTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { startStubbedProxy } from "./stubbedProxy.ts"

const waitFor = async (check: () => boolean, ms = 5_000) => {
  const until = performance.now() + ms
  while (!check()) {
    if (performance.now() > until) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("GET /v1/models on the local proxy", () => {
  it("a client that leaves cancels the gateway call: its signal is aborted, nothing is answered, the log says 499", async () => {
    const signals: Array<AbortSignal> = []
    const logged: Array<LogAnnotations> = []
    const proxy = await startStubbedProxy({
      tokeniser: inProcessTokeniser("off"),
      log: (_level, _message, annotations = {}) => void logged.push(annotations),
      // A gateway that has not answered yet: the call ends only when its signal is aborted.
      fetch: (_input, init) =>
        new Promise<Response>((_, reject) => {
          const signal = init!.signal!
          signals.push(signal)
          signal.addEventListener("abort", () => reject(signal.reason), { once: true })
        })
    })
    let answered = false
    const req = request(`${proxy.url}/v1/models`, () => (answered = true))
    req.on("error", () => undefined)
    req.end()
    await waitFor(() => signals.length === 1)
    expect(signals[0]!.aborted).toBe(false)
    req.destroy()
    await waitFor(() => signals[0]!.aborted)
    expect((signals[0]!.reason as Error).name).toBe("ClientGone")
    await waitFor(() => logged.length === 1)
    expect(logged[0]).toMatchObject({ method: "GET", route: "/v1/models", status: 499 })
    expect(answered).toBe(false)
  })

  it("an unreachable gateway is a 502 gateway_unreachable, as on the relay routes (the proxy has no catalogue of its own)", async () => {
    const proxy = await startStubbedProxy({
      tokeniser: inProcessTokeniser("off"),
      log: () => undefined,
      fetch: async () => {
        throw new TypeError("connect ECONNREFUSED")
      }
    })
    const res = await fetch(`${proxy.url}/v1/models`)
    expect(res.status).toBe(502)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("gateway_unreachable")
  })

  it("the gateway's answer is passed back as it is, a 404 included (no list is made up on the device)", async () => {
    const calls: Array<string> = []
    const proxy = await startStubbedProxy({
      tokeniser: inProcessTokeniser("off"),
      log: () => undefined,
      fetch: async (input) => {
        calls.push(String(input))
        return new Response(JSON.stringify({ error: { code: "not_found", message: "no route" } }), { status: 404, headers: { "content-type": "application/json" } })
      }
    })
    const res = await fetch(`${proxy.url}/v1/models`)
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatch(/\/api\/v1\/models$/)
    expect(res.status).toBe(404)
    expect(res.headers.get("x-proxy-models-source")).toBe("gateway")
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found")
  })
})
