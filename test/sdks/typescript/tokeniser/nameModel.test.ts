import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  builtinNameModel,
  createSession,
  httpNameModel,
  NameModelUnavailable,
  tokeniseRequest,
  tokeniseText
} from "../../../../sdks/typescript/src/tokeniser/index.ts"

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  )
const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()))

const chat = (text: string) => ({ model: "m", messages: [{ role: "user", content: text }] })

describe("name models", () => {
  let model: Server
  let modelUrl: string
  let failing: Server
  let failingUrl: string
  let deadUrl: string
  const received: Array<unknown> = []

  beforeAll(async () => {
    // A stand-in model endpoint implementing the documented contract: every "Ada Lovelace" is a PERSON.
    model = createServer((req, res) => {
      let raw = ""
      req.on("data", (c) => (raw += c))
      req.on("end", () => {
        const { text } = JSON.parse(raw) as { text: string }
        received.push({ method: req.method, contentType: req.headers["content-type"], text })
        const entities = []
        for (let i = text.indexOf("Ada Lovelace"); i !== -1; i = text.indexOf("Ada Lovelace", i + 1)) {
          entities.push({ start: i, end: i + 12, type: "PERSON" }, { start: 0, end: 1, type: "ORG" })
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ entities }))
      })
    })
    modelUrl = await listen(model)
    failing = createServer((_req, res) => res.writeHead(503).end("overloaded"))
    failingUrl = await listen(failing)
    // A port that was just free: nothing listens there any more.
    const probe = createServer()
    deadUrl = await listen(probe)
    await close(probe)
  })

  afterAll(async () => {
    await close(model)
    await close(failing)
  })

  it("uses the HTTP model endpoint's PERSON entities and ignores other types", async () => {
    const out = await tokeniseRequest("chat.completions", chat("Ask Ada Lovelace about jane@example.com"), {
      names: httpNameModel({ url: modelUrl })
    })
    const content = (out.body as any).messages[0].content as string
    expect(content).toMatch(/^Ask <PERSON_1_[a-z2-9]{4}> about <EMAIL_1_[a-z2-9]{4}>$/)
    expect(out.detectorsFired).toEqual({ EMAIL: 1, PERSON: 1 })
    expect(received.at(-1)).toEqual({
      method: "POST",
      contentType: "application/json",
      text: "Ask Ada Lovelace about jane@example.com"
    })
  })

  it("fails closed with NameModelUnavailable when the endpoint is down", async () => {
    const attempt = tokeniseRequest("chat.completions", chat("Ask Ada Lovelace"), {
      names: httpNameModel({ url: deadUrl, timeoutMs: 2000 })
    })
    await expect(attempt).rejects.toBeInstanceOf(NameModelUnavailable)
    await expect(attempt).rejects.toThrow(/unreachable/)
  })

  it("fails closed when the endpoint answers an error status", async () => {
    await expect(
      tokeniseRequest("chat.completions", chat("Ask Ada Lovelace"), { names: httpNameModel({ url: failingUrl }) })
    ).rejects.toThrow(/HTTP 503/)
  })

  it("fails closed on any model error, even one that is not NameModelUnavailable", async () => {
    const broken = { detect: async () => Promise.reject(new Error("boom")) }
    await expect(tokeniseText("hello", createSession({ names: broken }))).rejects.toBeInstanceOf(NameModelUnavailable)
  })

  it("with failOpen proceeds without names, still tokenising structured values, and says so", async () => {
    const out = await tokeniseRequest("chat.completions", chat("Ask Ada Lovelace at jane@example.com"), {
      names: httpNameModel({ url: deadUrl, timeoutMs: 2000 }),
      failOpen: true
    })
    const content = (out.body as any).messages[0].content as string
    expect(content).toMatch(/^Ask Ada Lovelace at <EMAIL_1_[a-z2-9]{4}>$/)
    expect(out.nameModelSkipped).toBe(true)
  })

  it("the built-in on-device model finds names and drops honorifics", async () => {
    const spans = await builtinNameModel.detect("Yesterday Dr. Emily Watson met Barack Obama.")
    const text = "Yesterday Dr. Emily Watson met Barack Obama."
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual(["Emily Watson", "Barack Obama"])
  })

  it("names 'off' detects no names", async () => {
    const session = createSession({ names: "off" })
    expect(await tokeniseText("Barack Obama spoke.", session)).toBe("Barack Obama spoke.")
  })
})
