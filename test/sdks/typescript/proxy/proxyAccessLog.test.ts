import { describe, expect, it } from "vitest"
import { inProcessTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import type { LogAnnotations, LogLevel } from "../../../../sdks/typescript/src/proxy/proxyLog.ts"
import { logLine } from "../../../../sdks/typescript/src/proxy/proxyLog.ts"
import { ALIAS_PATTERN, builtinNameModel } from "../../../../sdks/typescript/src/tokeniser/index.ts"
import { startStubbedProxy } from "./stubbedProxy.ts"

interface Logged {
  readonly level: LogLevel
  readonly message: string
  readonly annotations: LogAnnotations
}

const EMAIL = "jane.doe@example.com"
const NAME = "Margaret Hamilton"
const GATEWAY_REQUEST_ID = "3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f"

/** The stand-in gateway echoes the tokenised prompt (so the answer holds aliases) with its own request id. */
const echoGateway = (sent: string) =>
  new Response(JSON.stringify({ choices: [{ message: { role: "assistant", content: `Echo: ${sent}` } }] }), {
    headers: { "content-type": "application/json", "x-request-id": GATEWAY_REQUEST_ID }
  })

const waitFor = async (condition: () => boolean) => {
  const deadline = Date.now() + 5_000
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe("local proxy access log", () => {
  it("one JSON line per request with method, route, status, duration and the gateway's request id; never a value or an alias", async () => {
    const logged: Array<Logged> = []
    const lines: Array<string> = []
    const proxy = await startStubbedProxy(
      {
        tokeniser: inProcessTokeniser(builtinNameModel),
        log: (level, message, annotations = {}) => {
          logged.push({ level, message, annotations })
          lines.push(logLine(level, message, annotations))
        }
      },
      echoGateway
    )
    const prompt = `Ask ${NAME} to mail ${EMAIL}`
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: prompt }] })
    })
    const answer = await res.text()
    // The answer went through aliases and came back with the originals: there was something to leak.
    expect(answer).toContain(EMAIL)
    expect(answer).toContain(NAME)
    await fetch(`${proxy.url}/healthz`)
    await fetch(`${proxy.url}/v1/chat/completions?secret=${EMAIL}`, { method: "GET" })
    await fetch(`${proxy.url}/private/${EMAIL}`)
    await waitFor(() => logged.length === 4)

    expect(logged.map((l) => [l.level, l.message, l.annotations.method, l.annotations.route, l.annotations.status])).toEqual([
      ["INFO", "request", "POST", "/v1/chat/completions", 200],
      ["INFO", "request", "GET", "/healthz", 200],
      ["INFO", "request", "GET", "/v1/chat/completions", 405],
      ["INFO", "request", "GET", "(unknown)", 404]
    ])
    expect(logged[0]!.annotations.request_id).toBe(GATEWAY_REQUEST_ID)
    expect(logged[0]!.annotations.duration_ms).toBeGreaterThan(0)
    expect(logged[2]!.annotations.code).toBe("method_not_allowed")
    expect(logged[3]!.annotations.code).toBe("not_found")

    for (const line of lines) {
      expect(line.endsWith("\n")).toBe(true)
      expect(line.slice(0, -1)).not.toContain("\n")
      expect(JSON.parse(line)).toMatchObject({ level: "INFO", message: "request", annotations: expect.any(Object) })
    }
    const all = lines.join("")
    expect(all).not.toContain(EMAIL)
    expect(all).not.toContain("Margaret")
    expect(all).not.toContain("Hamilton")
    expect(all.match(ALIAS_PATTERN)).toBeNull()
    expect(all).not.toMatch(/<(EMAIL|PERSON)_/)
  })

  it("a client that leaves before its answer is logged with status 499", async () => {
    const logged: Array<Logged> = []
    const proxy = await startStubbedProxy(
      {
        tokeniser: { tokenise: (_route, _body, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))), close: async () => undefined },
        log: (level, message, annotations = {}) => logged.push({ level, message, annotations })
      }
    )
    const client = new AbortController()
    const pending = fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] }),
      signal: client.signal
    }).catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 200))
    client.abort()
    await pending
    await waitFor(() => logged.length === 1)
    expect(logged[0]!.annotations).toMatchObject({ method: "POST", route: "/v1/chat/completions", status: 499 })
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("a client that leaves while still sending its body is logged with status 499, nothing is sent, and the next client is served", async () => {
    const logged: Array<Logged> = []
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off"), log: (level, message, annotations = {}) => logged.push({ level, message, annotations }) })
    const { request } = await import("node:http")
    await new Promise<void>((resolve) => {
      const req = request(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "content-length": 1000 } })
      req.on("error", () => resolve())
      // Half of the declared body, then the client goes away.
      req.write('{"model":"local-chat","messages":[{"role":"user","content":"' + "a".repeat(400), () => req.destroy())
      req.on("close", () => resolve())
    })
    await waitFor(() => logged.length === 1)
    expect(logged[0]!.annotations).toMatchObject({ method: "POST", route: "/v1/chat/completions", status: 499 })
    expect(proxy.gatewayCalls).toEqual([])
    const next = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] })
    })
    expect(next.status).toBe(200)
    expect(proxy.gatewayCalls).toEqual(["http://gateway.invalid/api/v1/chat/completions"])
  })

  it("a multi-line message is written as one line", () => {
    const line = logLine("ERROR", "first\n  second", { event: "x" }, new Date(0))
    expect(line).toBe('{"message":"first second","level":"ERROR","timestamp":"1970-01-01T00:00:00.000Z","annotations":{"event":"x"},"spans":{}}\n')
  })
})
