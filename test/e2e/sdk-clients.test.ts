import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { attestingFetch } from "../support/engine.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fundedKey } from "../support/tenant.ts"

let provider: FakeProvider
let gw: TestGateway
let apiKey: string
let orgId: string
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
  ;({ apiKey, orgId } = await fundedKey(gw))
})
afterAll(async () => {
  await gw.close()
  await provider.close()
})
beforeEach(() => provider.reset())

// The official SDKs, unmodified; only their fetch adds the engine and attestation headers, as the client engine does.
const openai = () =>
  new OpenAI({ apiKey, baseURL: `${gw.url}/api/v1`, fetch: attestingFetch("chat.completions"), maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey, baseURL: `${gw.url}/api`, fetch: attestingFetch("messages"), maxRetries: 0 })

describe("official SDKs against the gateway", () => {
  it("openai: a non-streamed chat completion", async () => {
    const completion = await openai().chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: "Hi <PERSON_1>" }]
    })
    expect(completion.choices[0].message.content).toBe("Echo: Hi <PERSON_1>")
    expect(provider.received).toHaveLength(1)
    const usage = await gw.query("SELECT 1 FROM usage_records WHERE request_id = $1", completion.id)
    expect(usage).toHaveLength(1)
  })

  it("openai: a streamed chat completion arrives in chunks and ends cleanly", async () => {
    const stream = await openai().chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: "one two three" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    let text = ""
    let chunks = 0
    for await (const chunk of stream) {
      chunks++
      text += chunk.choices[0]?.delta?.content ?? ""
    }
    expect(text).toBe("Echo: one two three")
    expect(chunks).toBeGreaterThan(3)
    const rows = await gw.query<{ input_tokens: number; estimated: boolean; partial: boolean }>(
      "SELECT input_tokens, estimated, partial FROM usage_records WHERE org_id = $1 AND capability = 'chat.completions' ORDER BY finished_at DESC LIMIT 1",
      orgId
    )
    expect(rows[0]).toMatchObject({ estimated: false, partial: false })
  })

  it("openai: embeddings", async () => {
    const res = await new OpenAI({ apiKey, baseURL: `${gw.url}/api/v1`, fetch: attestingFetch("embeddings"), maxRetries: 0 })
      .embeddings.create({ model: "local-embed", input: ["<EMAIL_1>", "plain"] })
    expect(res.data).toHaveLength(2)
    expect(res.data[0].embedding).toHaveLength(8)
  })

  it("anthropic: a non-streamed message", async () => {
    const message = await anthropic().messages.create({
      model: "local-chat",
      max_tokens: 64,
      messages: [{ role: "user", content: "Hello <EMAIL_1>" }]
    })
    expect(message.content[0]).toMatchObject({ type: "text", text: "Echo: Hello <EMAIL_1>" })
    expect(provider.received[0].path).toBe("/v1/messages")
    expect(provider.received[0].headers["x-api-key"]).toBe("local")
  })

  it("anthropic: a streamed message", async () => {
    const final = await anthropic().messages.stream({
      model: "local-chat",
      max_tokens: 64,
      messages: [{ role: "user", content: "stream me please" }]
    }).finalMessage()
    expect(final.content[0]).toMatchObject({ type: "text", text: "Echo: stream me please" })
    const rows = await gw.query<{ input_tokens: number; output_tokens: number; estimated: boolean }>(
      "SELECT input_tokens, output_tokens, estimated FROM usage_records WHERE request_id = $1",
      final.id
    )
    expect(rows).toHaveLength(1)
    expect(rows[0].estimated).toBe(false)
    expect(rows[0].output_tokens).toBe(final.usage.output_tokens)
  })
})
