import Anthropic from "@anthropic-ai/sdk"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeReplyText, type FakeProvider } from "../../../../programs/fake-provider.ts"
import { decodeAttestationHeader, verifyV3Signature, type V3Envelope } from "../../../../sdks/typescript/src/wire/attestation/v3.ts"
import { ENGINE } from "../../../../sdks/typescript/src/client/engine.ts"
import type { StartedProxy } from "../../../../sdks/typescript/src/proxy/startProxy.ts"
import type { TestGateway } from "../../../support/gateway.ts"
import { startProxyFixture, type ProxyFixture } from "../../../support/proxyFixture.ts"

let fx: ProxyFixture
let provider: FakeProvider
let gw: TestGateway
let proxy: StartedProxy

const relayEgress = () => fx.relayEgress()
const providerSaw = () => fx.providerSaw()

const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

beforeAll(async () => {
  // Streams come in 5-character frames, so aliases are cut across frames.
  fx = await startProxyFixture({ name: "proxy-server", provider: { streamPieceChars: 5 } })
  ;({ provider, gw, proxy } = fx)
})
afterAll(async () => {
  await fx?.close()
})
beforeEach(() => fx.reset())

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"

describe("local proxy with the official SDKs, unmodified", () => {
  it("openai: the answer has the originals restored while the provider only ever saw tokens", async () => {
    const openai = new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const prompt = `Email me at ${EMAIL} or call ${PHONE}`
    const completion = await openai.chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: prompt }]
    })
    expect(completion.choices[0].message.content).toBe(fakeReplyText(prompt))
    expect(provider.received).toHaveLength(1)
    const seen = providerSaw()
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain(PHONE)
    expect(seen).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
    expect(seen).toMatch(/<PHONE_1_[a-z2-9]{4}>/)
    // Nothing the device sent to the gateway held an original either.
    expect(relayEgress()).toHaveLength(1)
    expect(relayEgress()[0].body).not.toContain(EMAIL)
  })

  it("anthropic: the answer has the originals restored while the provider only ever saw tokens", async () => {
    const anthropic = new Anthropic({ apiKey: "anything", baseURL: proxy.url, maxRetries: 0 })
    const prompt = `Email me at ${EMAIL}`
    const message = await anthropic.messages.create({
      model: "local-chat",
      max_tokens: 64,
      system: `The user's address is ${EMAIL}.`,
      messages: [{ role: "user", content: prompt }]
    })
    expect(message.content[0]).toMatchObject({ type: "text", text: fakeReplyText(prompt) })
    expect(provider.received).toHaveLength(1)
    expect(provider.received[0].path).toBe("/v1/messages")
    expect(providerSaw()).not.toContain(EMAIL)
    expect(providerSaw()).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
  })

  it("openai tool round trip: the app gets the tool call's arguments restored, sends the conversation back, and the provider never sees an original", async () => {
    const openai = new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const tools = [{ type: "function" as const, function: { name: "send_mail", parameters: { type: "object", properties: { text: { type: "string" } } } } }]
    const user = { role: "user" as const, content: `Write to ${EMAIL} about the invoice` }
    const first = await openai.chat.completions.create({ model: "local-chat", messages: [user], tools })
    const call = first.choices[0].message.tool_calls![0] as { id: string; type: "function"; function: { name: string; arguments: string } }
    // The fake calls the tool with the user's text: the app sees the original address, as it must to send the mail.
    expect(JSON.parse(call.function.arguments)).toEqual({ text: user.content })
    const second = await openai.chat.completions.create({
      model: "local-chat",
      tools,
      messages: [user, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: `Mail sent to ${EMAIL}` }]
    })
    expect(second.choices[0].message.content).toBe(fakeReplyText(`Mail sent to ${EMAIL}`))
    expect(provider.received).toHaveLength(2)
    // The history's tool call went back tokenised, like the rest of the conversation.
    const history = JSON.parse(provider.received[1].body.toString("utf8"))
    expect(JSON.parse(history.messages[1].tool_calls[0].function.arguments).text).toMatch(/^Write to <EMAIL_1_[a-z2-9]{4}> about the invoice$/)
    expect(providerSaw()).not.toContain(EMAIL)
    for (const e of relayEgress()) expect(e.body).not.toContain(EMAIL)
  })

  it("anthropic tool round trip: the tool_use input comes back restored and goes upstream tokenised in the next turn", async () => {
    const anthropic = new Anthropic({ apiKey: "anything", baseURL: proxy.url, maxRetries: 0 })
    const tools = [{ name: "send_mail", input_schema: { type: "object" as const, properties: { text: { type: "string" } } } }]
    const user = { role: "user" as const, content: `Write to ${EMAIL} today` }
    const first = await anthropic.messages.create({ model: "local-chat", max_tokens: 64, messages: [user], tools })
    const use = first.content.find((b) => b.type === "tool_use")!
    expect(use.input).toEqual({ text: user.content })
    const second = await anthropic.messages.create({
      model: "local-chat",
      max_tokens: 64,
      tools,
      messages: [user, { role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: `Sent to ${EMAIL}` }] }]
    })
    expect(second.content[0]).toMatchObject({ type: "text", text: fakeReplyText(`Sent to ${EMAIL}`) })
    expect(provider.received).toHaveLength(2)
    expect(providerSaw()).not.toContain(EMAIL)
    expect(providerSaw()).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
  })

  it("Idempotency-Key: a retry tokenises to the same bytes, so the gateway replays the first answer (one provider call); another key is a new call with other aliases", async () => {
    const openai = new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const body = { model: "local-chat", messages: [{ role: "user" as const, content: `Invoice for ${EMAIL}` }] }
    const key = `order-${crypto.randomUUID()}`
    // The OpenAI SDK's own idempotencyKey option sends nothing (its client names no idempotency header): a header it is.
    const first = await openai.chat.completions.create(body, { headers: { "Idempotency-Key": key } }).withResponse()
    const retry = await openai.chat.completions.create(body, { headers: { "Idempotency-Key": key } }).withResponse()
    expect(first.data.choices[0].message.content).toBe(fakeReplyText(body.messages[0].content))
    // The retry is the stored answer, restored with the same aliases.
    expect(retry.data.choices[0].message.content).toBe(first.data.choices[0].message.content)
    expect(retry.response.headers.get("idempotency-replayed")).toBe("true")
    expect(retry.response.headers.get("x-service-receipt-v2-jti")).toBe(first.response.headers.get("x-service-receipt-v2-jti"))
    expect(provider.received).toHaveLength(1)
    const [a, b] = relayEgress()
    expect(a.headers.get("idempotency-key")).toBe(key)
    expect(b.body).toBe(a.body)
    expect(a.body).not.toContain(EMAIL)

    await openai.chat.completions.create(body, { headers: { "Idempotency-Key": `${key}-other` } })
    expect(provider.received).toHaveLength(2)
    const alias = (text: string) => /<EMAIL_1_[a-z2-9]{4}>/.exec(text)![0]
    expect(alias(relayEgress()[2].body)).not.toBe(alias(a.body))
  })

  it("the proxy uses its own gateway key, never the client's, and signs a valid v3 attestation of the exact bytes", async () => {
    const openai = new OpenAI({ apiKey: "client-key-that-must-not-travel", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    await openai.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: `hi ${EMAIL}` }] })
    const sent = relayEgress()[0]
    expect(sent.url).toBe(`${gw.url}/api/v1/chat/completions`)
    expect(sent.headers.get("authorization")).toMatch(/^Bearer svc_/)
    expect(JSON.stringify([...sent.headers])).not.toContain("client-key-that-must-not-travel")
    expect(sent.headers.get("x-service-engine")).toBe(`relay-ts/${ENGINE.version}`)
    const envelope = decodeAttestationHeader(sent.headers.get("x-service-attestation")!) as V3Envelope
    expect(await verifyV3Signature(envelope)).toBe(true)
    const claims = envelope.claims["v3-attestation"]
    expect(claims.route).toBe("chat.completions")
    expect(claims.engine).toEqual(ENGINE)
    expect(claims.detectors_fired).toEqual({ EMAIL: 1 })
    expect(provider.received[0].headers["x-service-attestation"]).toBeUndefined()
  })

  it("passes the gateway's request id and receipt headers through to the client", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hello" }] })
    })
    expect(res.status).toBe(200)
    const fromGateway = relayEgress()[0].responseHeaders
    expect(fromGateway.get("x-request-id")).toBeTruthy()
    expect(res.headers.get("x-request-id")).toBe(fromGateway.get("x-request-id"))
    const receiptNames = [...fromGateway.keys()].filter((name) => name.startsWith("x-service-receipt"))
    for (const name of receiptNames) expect(res.headers.get(name)).toBe(fromGateway.get(name))
  })

  it("embeddings: input is tokenised before egress", async () => {
    const openai = new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const res = await openai.embeddings.create({ model: "local-embed", input: [`mail ${EMAIL}`, "plain"] })
    expect(res.data).toHaveLength(2)
    expect(providerSaw()).not.toContain(EMAIL)
  })
})

describe("local proxy 0.4: streaming", () => {
  const prompt = `Email me at ${EMAIL} or call ${PHONE}`

  it("openai: a streamed chat completion arrives in chunks with the originals restored (aliases cut across frames), the receipt trailer passed on", async () => {
    const openai = new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const stream = await openai.chat.completions.create({ model: "local-chat", stream: true, messages: [{ role: "user", content: prompt }] })
    let text = ""
    let chunks = 0
    for await (const chunk of stream) {
      chunks++
      text += chunk.choices[0]?.delta?.content ?? ""
    }
    expect(chunks).toBeGreaterThan(5)
    expect(text).toBe(fakeReplyText(prompt))
    const seen = providerSaw()
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain(PHONE)
    expect(seen).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
    // The engine asked for usage before signing, so the gateway meters exactly.
    expect(JSON.parse(provider.received[0].body.toString("utf8")).stream_options).toEqual({ include_usage: true })
  })

  it("raw SSE: frames pass as they arrive, the receipt-v2 trailer follows [DONE] unchanged", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, messages: [{ role: "user", content: prompt }] })
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const text = await res.text()
    expect(text).not.toMatch(/<EMAIL_1_|<PHONE_1_/)
    const afterDone = text.slice(text.indexOf("data: [DONE]\n\n") + "data: [DONE]\n\n".length)
    expect(afterDone.startsWith("event: receipt-v2\ndata: {")).toBe(true)
    expect(JSON.parse(afterDone.slice("event: receipt-v2\ndata: ".length))).toMatchObject({ v: 2, alg: "ES256" })
  })

  it("anthropic: a streamed message with the originals restored", async () => {
    const anthropic = new Anthropic({ apiKey: "anything", baseURL: proxy.url, maxRetries: 0 })
    const stream = anthropic.messages.stream({ model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: prompt }] })
    let text = ""
    stream.on("text", (delta) => (text += delta))
    const final = await stream.finalMessage()
    expect(text).toContain(`${EMAIL} or call ${PHONE}`)
    expect(final.content[0].type === "text" && final.content[0].text).toContain(EMAIL)
    expect(providerSaw()).not.toContain(EMAIL)
  })
})

describe("local proxy refusals", () => {
  it("with PROXY_STREAMING=off, stream: true answers 501 with a clear error and sends nothing (the 0.3 behaviour)", async () => {
    const off = await fx.startAnother({ PROXY_STREAMING: "off" })
    try {
      fx.reset()
      const res = await fetch(`${off.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "local-chat", stream: true, messages: [{ role: "user", content: "hi" }] })
      })
      expect(res.status).toBe(501)
      const body = await res.json()
      expect(body.error.code).toBe("stream_not_supported")
      expect(body.error.message).toMatch(/PROXY_STREAMING=off/)
      expect(relayEgress()).toHaveLength(0)
      expect(provider.received).toHaveLength(0)
    } finally {
      await off.close()
    }
  })

  it("fail-closed: an unreachable name model endpoint refuses with 503 and nothing reaches the gateway", async () => {
    const down = await fx.startAnother({ NAME_MODEL: `http://127.0.0.1:${await closedPort()}/names` })
    try {
      fx.reset() // the start-up identity probe is not a relay call
      const openai = new OpenAI({ apiKey: "anything", baseURL: `${down.url}/v1`, maxRetries: 0 })
      const error = await openai.chat.completions
        .create({ model: "local-chat", messages: [{ role: "user", content: `I am Jane Doe, ${EMAIL}` }] })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503)
      expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/name model is unavailable.*not sent/)
      expect(fx.egress).toHaveLength(0)
      expect(provider.received).toHaveLength(0)
    } finally {
      await down.close()
    }
  })

  it("a request body that is not JSON is 400 and sends nothing", async () => {
    const res = await fetch(`${proxy.url}/v1/messages`, { method: "POST", body: "not json" })
    expect(res.status).toBe(400)
    expect((await res.json()).error.code).toBe("invalid_request")
    expect(fx.egress).toHaveLength(0)
  })

  it("a gateway error is passed through with its status and body", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] })
    })
    const fromGateway = relayEgress()[0]
    expect(fromGateway.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBe(fromGateway.status)
    expect((await res.json()).error.code).toMatch(/model/)
  })

  it("a request from a web page origin is refused (another site cannot spend the user's key)", async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] })
    })
    expect(res.status).toBe(403)
    expect((await res.json()).error.code).toBe("origin_not_allowed")
    expect(fx.egress).toHaveLength(0)
  })

  it("a request naming another Host (DNS rebinding) is refused", async () => {
    const { request } = await import("node:http")
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${proxy.url}/v1/models`, { headers: { host: "attacker.example:8799" } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on("error", reject)
      req.end()
    })
    expect(status).toBe(403)
    expect(fx.egress).toHaveLength(0)
  })

  it("unknown paths are 404 not_found", async () => {
    const res = await fetch(`${proxy.url}/v1/tokenize`, { method: "POST", body: "{}" })
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe("not_found")
  })
})

describe("local proxy informational routes", () => {
  it("GET /healthz answers ok with the engine and gateway", async () => {
    const res = await fetch(`${proxy.url}/healthz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: "ok", engine: `relay-ts/${ENGINE.version}`, gateway: gw.url })
  })

  it("GET /v1/models lists the models the gateway routes (openai SDK)", async () => {
    const openai = new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const ids: Array<string> = []
    for await (const model of openai.models.list()) ids.push(model.id)
    expect(ids).toContain("local-chat")
    expect(ids).toContain("local-embed")
    expect(new Set(ids).size).toBe(ids.length)
  })
})
