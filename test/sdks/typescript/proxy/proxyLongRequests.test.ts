import { request } from "node:http"
import { describe, expect, it } from "vitest"
import { inProcessTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { workerTokeniser } from "../../../../sdks/typescript/src/proxy/workerTokeniser.ts"
import { detectNamesWithCompromise } from "../../../../sdks/typescript/src/tokeniser/compromiseNames.ts"
import type { NameModel } from "../../../../sdks/typescript/src/tokeniser/index.ts"
import { scanInWindows } from "../../../../sdks/typescript/src/tokeniser/textWindows.ts"
import { startStubbedProxy } from "./stubbedProxy.ts"

/** Prose with a different name in every sentence: `chars` long, slow for the name model, never repeating. */
const prose = (chars: number): string => {
  const parts: Array<string> = []
  for (let i = 0, length = 0; length < chars; i++) {
    const sentence = `Yesterday Alice Number${i} met Bob Person${i * 7} to talk about report ${i}. `
    parts.push(sentence)
    length += sentence.length
  }
  return parts.join("").slice(0, chars)
}

const chat = (content: string) => JSON.stringify({ model: "local-chat", messages: [{ role: "user", content }] })

describe("local proxy: long requests", () => {
  it("tokenising past the time budget: 422 tokenisation_timeout at once, and nothing is sent to the gateway", async () => {
    const proxy = await startStubbedProxy({ tokeniseTimeoutMs: 300 })
    const started = performance.now()
    // 2 MB: about 1.5 s of CPU with the built-in model, well past the 300 ms budget even on a fast machine.
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body: chat(prose(2_000_000)) })
    const elapsed = performance.now() - started
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.error.code).toBe("tokenisation_timeout")
    expect(body.error.message).toMatch(/longer than 300 ms.*not sent.*TOKENISE_TIMEOUT_MS/)
    expect(proxy.gatewayCalls).toEqual([])
    // The whole text would take several seconds: the budget stopped the work, it did not wait for it.
    expect(elapsed).toBeLessThan(3_000)
  })

  it("within the budget the same kind of request is tokenised and relayed", async () => {
    const proxy = await startStubbedProxy({ tokeniseTimeoutMs: 60_000 })
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body: chat(prose(20_000)) })
    expect(res.status).toBe(200)
    expect(proxy.gatewayCalls).toEqual(["http://gateway.invalid/api/v1/chat/completions"])
  })

  it("/healthz answers while a long request is being tokenised", async () => {
    const proxy = await startStubbedProxy({})
    const client = new AbortController()
    let longSettled = false
    // 3 MB: about 2 s of CPU with the built-in model, so it is still being tokenised when /healthz is asked.
    const long = fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body: chat(prose(3_000_000)), signal: client.signal })
      .then((res) => res.text())
      .catch(() => undefined)
      .finally(() => (longSettled = true))
    await new Promise((resolve) => setTimeout(resolve, 500))
    const started = performance.now()
    const health = await fetch(`${proxy.url}/healthz`)
    const waited = performance.now() - started
    expect(health.status).toBe(200)
    expect((await health.json()).status).toBe("ok")
    expect(longSettled).toBe(false)
    expect(waited).toBeLessThan(1_500)
    client.abort()
    await long
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("a client that goes away stops the tokenising in the worker: the process stops using CPU, and nothing is sent", async () => {
    // The compromise name model (opt-in, ~10 s of CPU per MB): tokenising 3 MB must outlast the client's 1.5 s. The
    // built-in portable model does 3 MB in about 2 s of CPU, which a quiet machine finishes before the client leaves.
    const tokeniser = workerTokeniser({ kind: "compromise" })
    const proxy = await startStubbedProxy({ tokeniser })
    const body = chat(prose(3_000_000))
    const req = request(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-length": Buffer.byteLength(body) } })
    req.on("error", () => undefined)
    req.end(body)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    req.destroy()
    // The worker finishes what it is in the middle of (a window of names, or the structured detectors' one
    // pass over the whole text: a few seconds here), then stops: the process goes quiet long before the
    // 30 s or more of CPU that tokenising the rest would take.
    const left = performance.now()
    let quietAfterMs: number | undefined
    while (quietAfterMs === undefined && performance.now() - left < 15_000) {
      const before = process.cpuUsage()
      await new Promise((resolve) => setTimeout(resolve, 500))
      const used = process.cpuUsage(before)
      if ((used.user + used.system) / 1000 < 100) quietAfterMs = performance.now() - left
    }
    expect(quietAfterMs).toBeDefined()
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("a client that goes away stops the tokenising between windows (in-process tokeniser), and nothing is sent", async () => {
    let windows = 0
    // The built-in model's compromise part, counting the windows it is given.
    const counting: NameModel = {
      detect: (text, options) =>
        scanInWindows(
          text,
          (view) => {
            windows++
            return detectNamesWithCompromise(view)
          },
          { signal: options?.signal }
        )
    }
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser(counting) })
    const body = chat(prose(2_000_000))
    const req = request(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-length": Buffer.byteLength(body) } })
    req.on("error", () => undefined)
    req.end(body)
    const deadline = performance.now() + 10_000
    while (windows < 3 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(windows).toBeGreaterThanOrEqual(3)
    req.destroy()
    await new Promise((resolve) => setTimeout(resolve, 300))
    const afterAbort = windows
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(windows).toBe(afterAbort)
    // ~250 windows in the whole text: it stopped near where the client left.
    expect(windows).toBeLessThan(100)
    expect(proxy.gatewayCalls).toEqual([])
  })
})
