// The TypeScript SDK's RelayClient against a real gateway and the fake provider: personal data is tokenised on this
// device (the provider sees only aliases), answers come back with the originals (streams included, aliases cut
// across frames), receipts are verified offline; failures are typed and nothing is sent when the engine refuses.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import {
  AuthenticationError,
  ConfigurationError,
  GatewayIdentityError,
  InsufficientBalanceError,
  NameModelUnavailableError,
  RelayClient,
  RelayError,
  StreamError
} from "../../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

// Streams arrive in 3-character frames, so every alias is cut across frames.
const fx = useRelayFixture({}, { streamPieceChars: 3 })

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const PROMPT = `Email ${EMAIL} or call ${PHONE} about the invoice.`

let deviceKey: CryptoKeyPair
beforeAll(async () => {
  // The device's files (stable-alias secret) go to a temporary config directory, not the user's.
  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-sdk-config-"))
  deviceKey = await generateSigningKeyPair()
})

const client = async (options: Partial<ConstructorParameters<typeof RelayClient>[0]> = {}) => {
  const { apiKey, orgId } = await fundedKey(fx.gw)
  return { client: new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey, ...options }), orgId }
}

const providerSaw = () => fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")

const expectNoOriginalUpstream = () => {
  const seen = providerSaw()
  expect(seen).not.toContain(EMAIL)
  expect(seen).not.toContain("7946")
  expect(seen).toMatch(/<EMAIL_1_[0-9a-z]+>/)
}

describe("RelayClient: private relay calls", () => {
  it("chat completion: the provider sees aliases, the caller gets the originals and a verified receipt", async () => {
    const { client: relay, orgId } = await client()
    const answer = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    expect(answer.choices[0].message.content).toContain(EMAIL)
    expect(answer.choices[0].message.content).toContain(PHONE)
    expectNoOriginalUpstream()
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.receipt).toMatchObject({ v: 2, chain: { chain_id: `receipt-v2-org-${orgId}` } })
    expect(answer.receiptVerified).toBe(true)
    expect(answer.countersignature).toMatchObject({ v: "v3-countersignature", receipt_jti: answer.receipt!.jti })
    expect(JSON.stringify(answer.tokenisedRequest)).not.toContain(EMAIL)
    // The call's aliases: each alias that left the device, with its original (kept here, never serialised).
    const sentEmailAlias = /<EMAIL_1_[0-9a-z]+>/.exec(JSON.stringify(answer.tokenisedRequest))![0]
    expect(answer.aliases.get(sentEmailAlias)).toBe(EMAIL)
    expect([...answer.aliases.values()].sort()).toEqual([EMAIL, PHONE].sort())
    // The meta fields do not change the provider's shape when serialised.
    expect(Object.keys(JSON.parse(JSON.stringify(answer)))).not.toContain("receipt")
    expect(Object.keys(JSON.parse(JSON.stringify(answer)))).not.toContain("aliases")
  })

  it("fetches the gateway's JWKS once on first use: the identity probe's answer seeds the receipt-key cache", async () => {
    const requested: Array<string> = []
    const counting: typeof fetch = (input, init) => {
      requested.push(new URL(input instanceof Request ? input.url : String(input)).pathname)
      return fetch(input, init)
    }
    const { client: relay } = await client({ fetch: counting })
    const first = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    const second = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    expect(first.receiptVerified).toBe(true)
    expect(second.receiptVerified).toBe(true)
    const jwksRequests = requested.filter((path) => path === "/api/.well-known/service-receipt-pubkeys.jwks")
    expect(jwksRequests).toHaveLength(1)
    expect(requested.filter((path) => path === "/api/v1/chat/completions")).toHaveLength(2)
  })

  it("streamed chat completion: aliases cut across 3-character frames are restored, the trailer receipt verifies", async () => {
    const { client: relay } = await client()
    const stream = await relay.chat.completions.create({ model: "local-chat", stream: true, messages: [{ role: "user", content: PROMPT }] })
    let text = ""
    let frames = 0
    for await (const chunk of stream) {
      frames++
      text += chunk.choices?.[0]?.delta?.content ?? ""
      // Never a fragment of an alias on screen.
      expect(text).not.toMatch(/<EMAIL_1_[0-9a-z]*$/)
    }
    expect(frames).toBeGreaterThan(10)
    expect(text).toBe(`Echo: ${PROMPT}`)
    expectNoOriginalUpstream()
    expect(stream.receipt).toMatchObject({ v: 2 })
    expect(stream.receiptVerified).toBe(true)
    expect([...stream.aliases.values()]).toContain(EMAIL)
    // The engine asked the provider for usage before signing.
    expect(JSON.parse(fx.provider.received.at(-1)!.body.toString("utf8")).stream_options).toEqual({ include_usage: true })
  })

  it("messages (Anthropic format), streamed and not", async () => {
    const { client: relay } = await client()
    const body = { model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: PROMPT }] }
    const answer = await relay.messages.create(body)
    expect(answer.content[0].text).toContain(EMAIL)
    expect(answer.receiptVerified).toBe(true)
    const stream = await relay.messages.create({ ...body, stream: true })
    let text = ""
    for await (const event of stream) if (event.type === "content_block_delta") text += event.delta.text
    expect(text).toContain(`${EMAIL} or call ${PHONE}`)
    expect(stream.receiptVerified).toBe(true)
    expectNoOriginalUpstream()
  })

  it("embeddings use stable aliases: the same input is sent identically twice (repeatable vectors)", async () => {
    const { client: relay } = await client()
    fx.provider.reset()
    const a = await relay.embeddings.create({ model: "local-embed", input: PROMPT })
    const b = await relay.embeddings.create({ model: "local-embed", input: PROMPT })
    expect(a.data[0].embedding).toEqual(b.data[0].embedding)
    const [first, second] = fx.provider.received.map((r) => JSON.parse(r.body.toString("utf8")).input)
    expect(first).toBe(second)
    expect(first).not.toContain(EMAIL)
  })

  it("a call retried with the caller's own idempotencyKey is replayed: same bytes sent, one provider call, one receipt; another key is a new call", async () => {
    const { client: relay, orgId } = await client()
    fx.provider.reset()
    const body = { model: "local-chat", messages: [{ role: "user", content: PROMPT }] }
    const key = `sdk-${crypto.randomUUID()}`
    const first = await relay.chat.completions.create(body, { idempotencyKey: key })
    const retry = await relay.chat.completions.create(body, { idempotencyKey: key })
    expect(retry.choices[0].message.content).toBe(first.choices[0].message.content)
    expect(retry.choices[0].message.content).toContain(EMAIL)
    expect(retry.receipt!.jti).toBe(first.receipt!.jti)
    expect(JSON.stringify(retry.tokenisedRequest)).toBe(JSON.stringify(first.tokenisedRequest))
    expect(fx.provider.received).toHaveLength(1)
    expect(await fx.gw.query("SELECT count(*)::int AS n FROM usage_records WHERE org_id = $1", orgId)).toEqual([{ n: 1 }])
    const other = await relay.chat.completions.create(body, { idempotencyKey: `${key}-2` })
    expect(other.receipt!.jti).not.toBe(first.receipt!.jti)
    expect(fx.provider.received).toHaveLength(2)
    expectNoOriginalUpstream()
  })

  it("lists models", async () => {
    const { client: relay } = await client()
    const models = await relay.models.list()
    expect(models.data.map((m: { id: string }) => m.id)).toContain("local-chat")
  })
})

describe("RelayClient: a page whose server holds the key (keyHeldByServer)", () => {
  it("sends relay calls and the model list with no Authorization header, and answers carry the call's aliases", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const sentByClient: Array<Headers> = []
    // Stands for the application's server: it sees what the client sent, then adds the key.
    const forwardingServer: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      sentByClient.push(new Headers(headers))
      headers.set("authorization", `Bearer ${apiKey}`)
      return fetch(input, { ...init, headers })
    }
    const relay = new RelayClient({ gatewayUrl: fx.gw.url, keyHeldByServer: true, nameModel: "off", deviceKey, fetch: forwardingServer })
    fx.provider.reset()
    const answer = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    expect(answer.choices[0].message.content).toBe(`Echo: ${PROMPT}`)
    expect(answer.receiptVerified).toBe(true)
    expect([...answer.aliases.values()].sort()).toEqual([EMAIL, PHONE].sort())
    expect([...answer.aliases.keys()].every((alias) => providerSaw().includes(alias))).toBe(true)
    const stream = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }], stream: true })
    for await (const _ of stream) void _
    expect([...stream.aliases.values()]).toContain(EMAIL)
    expect((await relay.models.list()).data.length).toBeGreaterThan(0)
    expect(sentByClient.length).toBeGreaterThanOrEqual(3)
    for (const headers of sentByClient) expect(headers.has("authorization")).toBe(false)
    expectNoOriginalUpstream()
  })

  it("warmUp() probes the gateway and runs the built-in name model once, sending nothing to relay; it rejects for a URL that is not a gateway", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, deviceKey })
    fx.provider.reset()
    await relay.warmUp()
    expect(fx.provider.received).toHaveLength(0)
    const answer = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: `Ask Dr. Ada Lovelace: ${EMAIL}` }] })
    expect(answer.choices[0].message.content).toContain("Ada Lovelace")
    expect(providerSaw()).not.toContain("Lovelace")
    const notGateway = new RelayClient({ gatewayUrl: fx.provider.url, apiKey, deviceKey })
    await expect(notGateway.warmUp()).rejects.toBeInstanceOf(GatewayIdentityError)
  })

  it("refuses a key as well (the point is that the page holds none)", () => {
    expect(() => new RelayClient({ gatewayUrl: fx.gw.url, keyHeldByServer: true, apiKey: "svc_abc" })).toThrow(ConfigurationError)
  })
})

describe("RelayClient: failures are typed and nothing leaks", () => {
  it("402 from the gateway is an InsufficientBalanceError with code, status and request id; nothing forwarded", async () => {
    const { apiKey } = await fundedKey(fx.gw, "0")
    const relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey, retries: 0 })
    fx.provider.reset()
    const error = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] }).catch((e) => e)
    expect(error).toBeInstanceOf(InsufficientBalanceError)
    expect(error).toMatchObject({ status: 402, code: "insufficient_balance", requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(error.message).not.toBe("")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("client.fetch gives an official SDK the stable code in error.code, in its own shape, as the local proxy does", async () => {
    const { apiKey } = await fundedKey(fx.gw, "0")
    const relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey, retries: 0 })
    fx.provider.reset()
    const post = (path: string, body: string) => relay.fetch(`https://relay.invalid${path}`, { method: "POST", headers: { "content-type": "application/json" }, body })
    const chat = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    const gatewayError = async () => {
      // The gateway's own error object for the same refusal, straight from the gateway.
      const direct = await fetch(`${fx.gw.url}/api/v1/models`, { headers: { authorization: "Bearer not-a-key" } })
      return (await direct.json()).error
    }
    expect((await gatewayError()).type).toBeUndefined() // the gateway's envelope has no `type`: only `code`

    // OpenAI clients: the gateway's envelope, fields included; no `type` holding the code.
    const openai = await post("/v1/chat/completions", chat)
    expect(openai.status).toBe(402)
    const openaiBody = await openai.json()
    expect(openaiBody.error).toMatchObject({ code: "insufficient_balance", message: expect.any(String) })
    expect(openaiBody.error.type).toBeUndefined()
    expect(Object.keys(openaiBody)).toEqual(["error"])

    // Anthropic clients: Anthropic's type for the status, the same stable code and fields, the message on top.
    const anthropic = await post("/v1/messages", JSON.stringify({ model: "local-chat", max_tokens: 8, messages: [{ role: "user", content: PROMPT }] }))
    expect(anthropic.status).toBe(402)
    const anthropicBody = await anthropic.json()
    expect(anthropicBody).toMatchObject({ type: "error", error: { type: "billing_error", code: "insufficient_balance" } })
    expect(anthropicBody.message).toBe(anthropicBody.error.message)
    expect(Object.keys(anthropicBody.error).sort()).toEqual(Object.keys({ ...openaiBody.error, type: "" }).sort())

    // The SDK's own refusals the same way (nothing sent).
    const notJson = await post("/v1/messages", "{not json")
    expect(notJson.status).toBe(400)
    expect((await notJson.json()).error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" })
    const notJsonOpenai = await post("/v1/chat/completions", "{not json")
    expect(await notJsonOpenai.json()).toEqual({ error: { code: "invalid_request", message: "The request body is not JSON." } })
    expect(fx.provider.received).toHaveLength(0)
  })

  it("an unknown key is an AuthenticationError", async () => {
    const relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey: `svc_${"a".repeat(52)}`, nameModel: "off", deviceKey })
    await expect(relay.models.list()).rejects.toMatchObject({ constructor: AuthenticationError, status: 401, code: "invalid_key" })
  })

  it("refuses a plain-http gateway URL that is not loopback, and a URL that is not a gateway (nothing sent there)", async () => {
    expect(() => new RelayClient({ gatewayUrl: "http://relay.example.com", apiKey: `svc_${"a".repeat(52)}` })).toThrow(ConfigurationError)
    fx.provider.reset()
    const notGateway = new RelayClient({ gatewayUrl: fx.provider.url, apiKey: `svc_${"a".repeat(52)}`, nameModel: "off", deviceKey })
    const error = await notGateway.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] }).catch((e) => e)
    expect(error).toBeInstanceOf(GatewayIdentityError)
    expect(error.code).toBe("gateway_identity_failed")
    expect(providerSaw()).not.toContain("chat/completions")
    expect(fx.provider.received.filter((r) => r.method === "POST")).toHaveLength(0)
  })

  it("refuses a key file readable by others", () => {
    const file = join(mkdtempSync(join(tmpdir(), "pr-sdk-key-")), "key")
    writeFileSync(file, `svc_${"a".repeat(52)}\n`)
    chmodSync(file, 0o644)
    expect(() => new RelayClient({ gatewayUrl: fx.gw.url, apiKeyFile: file })).toThrow(ConfigurationError)
    chmodSync(file, 0o600)
    expect(new RelayClient({ gatewayUrl: fx.gw.url, apiKeyFile: file }).gatewayUrl).toBe(fx.gw.url)
  })

  it("fail-closed name model: an unreachable name model sends nothing", async () => {
    const { client: relay } = await client({ nameModel: "http://127.0.0.1:9/names" })
    fx.provider.reset()
    const error = await relay.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] }).catch((e) => e)
    expect(error).toBeInstanceOf(NameModelUnavailableError)
    expect(error.code).toBe("name_model_unavailable")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("a stream the upstream cuts mid-alias ends with a StreamError, and no fragment of an alias is shown", async () => {
    const { client: relay } = await client()
    fx.provider.setBehaviour({ kind: "cut-stream", afterChunks: 4 })
    const stream = await relay.chat.completions.create({ model: "local-chat", stream: true, messages: [{ role: "user", content: `Hi ${EMAIL}` }] })
    let text = ""
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices?.[0]?.delta?.content ?? ""
    })().catch((e) => e)
    expect(error).toBeInstanceOf(StreamError)
    expect(error).toBeInstanceOf(RelayError)
    expect(error.code).toBe("stream_error")
    expect(stream.receipt).toBeUndefined()
  })
})
