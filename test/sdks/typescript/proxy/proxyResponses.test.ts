import Anthropic from "@anthropic-ai/sdk"
import { createOpenAI } from "@ai-sdk/openai"
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeReplyText, type FakeProvider } from "../../../../programs/fake-provider.ts"
import { verifyReceipt } from "../../../../sdks/typescript/src/verify/receipt.ts"
import type { StartedProxy } from "../../../../sdks/typescript/src/proxy/startProxy.ts"
import type { TestGateway } from "../../../support/gateway.ts"
import { startProxyFixture, type ProxyFixture } from "../../../support/proxyFixture.ts"

/**
 * Real clients of OpenAI's Responses API and Anthropic's token counting, unmodified, pointed at the local proxy
 * (issue 34): the official `openai` package (`responses.create`, streamed and not, a function tool round trip), the
 * Vercel AI SDK (`generateText`, `streamText` with `@ai-sdk/openai`, whose default model is the Responses API) and
 * the Anthropic SDK's `messages.countTokens`. Each gets its originals back while the gateway and the provider only
 * ever see aliases; receipts verify.
 */
let fx: ProxyFixture
let provider: FakeProvider
let gw: TestGateway
let proxy: StartedProxy

const relayEgress = () => fx.relayEgress()
const providerSaw = () => fx.providerSaw()

beforeAll(async () => {
  // Streams come in 5-character frames, so aliases are cut across events.
  fx = await startProxyFixture({ name: "proxy-responses", provider: { streamPieceChars: 5 } })
  ;({ provider, gw, proxy } = fx)
})
afterAll(async () => {
  await fx?.close()
})
beforeEach(() => fx.reset())

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const prompt = `Email me at ${EMAIL} or call ${PHONE}`

const neverSeen = () => {
  const seen = providerSaw()
  expect(seen).not.toContain(EMAIL)
  expect(seen).not.toContain(PHONE)
  for (const e of relayEgress()) {
    expect(e.body).not.toContain(EMAIL)
    expect(e.body).not.toContain(PHONE)
  }
}

const jwks = async () => (await fetch(`${gw.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
const openai = () => new OpenAI({ apiKey: "anything", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
const tools = [{ type: "function" as const, name: "send_mail", parameters: { type: "object", properties: { text: { type: "string" } } }, strict: false }]

describe("openai: client.responses.create through the local proxy", () => {
  it("JSON: the Response has the originals restored, the provider saw only aliases, the receipt verifies", async () => {
    const { data: response, response: raw } = await openai().responses.create({ model: "local-chat", instructions: `You write to ${EMAIL}.`, input: prompt }).withResponse()
    expect(response.output_text).toBe(fakeReplyText(prompt))
    expect(response.instructions).toBe(`You write to ${EMAIL}.`)
    expect(provider.received).toHaveLength(1)
    expect(provider.received[0]!.path).toBe("/v1/responses")
    expect(relayEgress().map((e) => new URL(e.url).pathname)).toEqual(["/api/v1/responses"])
    expect(providerSaw()).toMatch(/<EMAIL_1_[a-z2-9]{4}>/)
    neverSeen()
    const header = raw.headers.get("x-service-receipt-v2")!
    expect((await verifyReceipt(header, { jwks: await jwks() })).valid).toBe(true)
  })

  it("streamed: events arrive with the originals restored (aliases cut across events), sequence numbers increasing", async () => {
    const stream = await openai().responses.create({ model: "local-chat", input: prompt, stream: true })
    let text = ""
    const types: Array<string> = []
    const numbers: Array<number> = []
    let completedText = ""
    for await (const event of stream) {
      types.push(event.type)
      numbers.push(event.sequence_number)
      if (event.type === "response.output_text.delta") text += event.delta
      if (event.type === "response.completed") completedText = event.response.output_text ?? (event.response.output[0] as { content: Array<{ text: string }> }).content[0]!.text
    }
    expect(types.filter((t) => t === "response.output_text.delta").length).toBeGreaterThan(5)
    expect(text).toBe(fakeReplyText(prompt))
    expect(completedText).toBe(fakeReplyText(prompt))
    // The receipt comes last, as a keep-alive event the SDK's types know.
    expect(types.at(-2)).toBe("response.completed")
    expect(types.at(-1)).toBe("keepalive")
    numbers.pop()
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b))
    expect(new Set(numbers).size).toBe(numbers.length)
    neverSeen()
  })

  it("streamed through responses.stream(): the final Response has the originals restored", async () => {
    const final = await openai().responses.stream({ model: "local-chat", input: prompt }).finalResponse()
    expect(final.output_text).toBe(fakeReplyText(prompt))
    neverSeen()
  })

  it("raw SSE: the receipt-v2 frame follows response.completed, its envelope as `receipt` of a keepalive event, and verifies", async () => {
    const res = await fetch(`${proxy.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, input: prompt })
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const frames = (await res.text()).split("\n\n").filter(Boolean)
    expect(frames.at(-2)).toMatch(/^event: response\.completed\n/)
    expect(frames.at(-1)).toMatch(/^event: receipt-v2\ndata: \{"type":"keepalive","receipt":\{/)
    const { receipt } = JSON.parse(frames.at(-1)!.slice("event: receipt-v2\ndata: ".length))
    expect(receipt).toMatchObject({ v: 2, alg: "ES256" })
    expect((await verifyReceipt(receipt, { jwks: await jwks() })).valid).toBe(true)
  })

  it("a function tool round trip: the call's arguments come back restored, go upstream tokenised in the next turn", async () => {
    const client = openai()
    const user = { role: "user" as const, content: `Write to ${EMAIL} about the invoice` }
    const first = await client.responses.create({ model: "local-chat", input: [user], tools })
    const call = first.output[0]!
    if (call.type !== "function_call") throw new Error("expected a function call")
    // The app sees the original address, as it must to send the mail.
    expect(JSON.parse(call.arguments)).toEqual({ text: user.content })
    const second = await client.responses.create({
      model: "local-chat",
      tools,
      input: [user, { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments }, { type: "function_call_output", call_id: call.call_id, output: `sent to ${EMAIL}` }]
    })
    expect(second.output_text).toBe(fakeReplyText(`sent to ${EMAIL}`))
    expect(provider.received).toHaveLength(2)
    neverSeen()
  })

  it("a streamed function call: argument deltas and the final item restored", async () => {
    const stream = await openai().responses.create({ model: "local-chat", input: `Write to ${EMAIL}`, tools, stream: true })
    let args = ""
    let done = ""
    for await (const event of stream) {
      if (event.type === "response.function_call_arguments.delta") args += event.delta
      if (event.type === "response.function_call_arguments.done") done = event.arguments
    }
    expect(JSON.parse(args)).toEqual({ text: `Write to ${EMAIL}` })
    expect(JSON.parse(done)).toEqual({ text: `Write to ${EMAIL}` })
    neverSeen()
  })

  it("an event type the proxy does not know is passed on, its text restored", async () => {
    const res = await fetch(`${proxy.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, input: prompt, metadata: { fake_unknown_event: "response.novel_thing" } })
    })
    const frames = (await res.text()).split("\n\n").filter(Boolean)
    const novel = frames.find((f) => f.startsWith("event: response.novel_thing\n"))!
    expect(JSON.parse(novel.split("\ndata: ")[1]!).text).toBe(fakeReplyText(prompt))
  })
})

describe("the Vercel AI SDK (@ai-sdk/openai, Responses API) through the local proxy", () => {
  const model = () => createOpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "anything" }).responses("local-chat")

  it("generateText", async () => {
    const result = await generateText({ model: model(), prompt, maxRetries: 0 })
    expect(result.text).toBe(fakeReplyText(prompt))
    expect(provider.received[0]!.path).toBe("/v1/responses")
    neverSeen()
  })

  it("streamText", async () => {
    const errors: Array<unknown> = []
    const result = streamText({ model: model(), prompt, maxRetries: 0, onError: ({ error }) => void errors.push(error) })
    const parts: Array<string> = []
    const kinds = new Set<string>()
    for await (const part of result.fullStream) {
      kinds.add(part.type)
      if (part.type === "text-delta") parts.push(part.text)
    }
    expect(parts.length).toBeGreaterThan(5)
    expect(parts.join("")).toBe(fakeReplyText(prompt))
    // The receipt frame after response.completed is not mistaken for a broken chunk.
    expect(kinds.has("error")).toBe(false)
    expect(errors).toEqual([])
    neverSeen()
  })

  it("a tool round trip: the tool runs on the original, its result goes back tokenised", async () => {
    const executed: Array<string> = []
    const result = await generateText({
      model: model(),
      prompt: `Mail ${EMAIL}`,
      tools: {
        send_mail: tool({
          inputSchema: jsonSchema<{ text: string }>({ type: "object", properties: { text: { type: "string" } } }),
          execute: async ({ text }) => {
            executed.push(text)
            return `sent to ${EMAIL}`
          }
        })
      },
      stopWhen: stepCountIs(2),
      maxRetries: 0
    })
    expect(executed).toEqual([`Mail ${EMAIL}`])
    // The second step answers the tool result: the fake echoes its text.
    expect(result.text).toContain(EMAIL)
    expect(provider.received).toHaveLength(2)
    neverSeen()
  })
})

describe("the local proxy's refusals on /v1/responses (nothing sent)", () => {
  const refused = async (body: unknown, status: number, code: string, path: string) => {
    const res = await fetch(`${proxy.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    expect(res.status).toBe(status)
    const json = await res.json()
    expect(json.error).toMatchObject({ code, details: { path } })
    expect(JSON.stringify(json)).not.toContain(EMAIL)
    expect(relayEgress()).toHaveLength(0)
    return json
  }

  it("previous_response_id: the stateless proxy cannot restore an earlier turn's aliases (refused by the egress policy)", async () => {
    const json = await refused({ model: "local-chat", previous_response_id: "resp_123", input: prompt }, 400, "unsupported_field", "/previous_response_id")
    expect(json.error.details.setting).toBe("PASSTHROUGH_PATHS")
    await refused({ model: "local-chat", conversation: "conv_1", input: prompt }, 400, "unsupported_field", "/conversation")
  })

  it("an input item type it does not know", async () => {
    await refused({ model: "local-chat", input: [{ type: "telepathy", thought: EMAIL }] }, 400, "unsupported_field", "/input/0")
  })

  it("a file part (415), a content part it does not know (400)", async () => {
    await refused({ model: "local-chat", input: [{ role: "user", content: [{ type: "input_file", filename: "a.txt", file_data: "data:text/plain;base64,aGk=" }] }] }, 415, "unsupported_content", "/input/0/content/0")
    await refused({ model: "local-chat", input: [{ role: "user", content: [{ type: "input_audio", data: "x" }] }] }, 400, "unsupported_field", "/input/0/content/0")
  })

  it("malformed items: 400 with a stable code naming the field (the egress policy's, else the gateway's), nothing reaches the provider", async () => {
    // Shapes the policy cannot walk are refused on the device; well-walked items the gateway finds incomplete are
    // refused there, after tokenising: either way no original in the answer and nothing at the provider.
    await refused({ model: "local-chat", input: 42 }, 400, "unsupported_field", "/input")
    await refused({ model: "local-chat", input: ["text"] }, 400, "unsupported_field", "/input/0")
    await refused({ model: "local-chat", input: [{ role: "user", content: 7 }] }, 400, "unsupported_field", "/input/0/content")
    const gatewayRefused = async (input: unknown, path: string) => {
      const res = await fetch(`${proxy.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local-chat", input }) })
      expect(res.status).toBe(400)
      const text = await res.text()
      expect(JSON.parse(text).error).toMatchObject({ code: "invalid_request", details: { path } })
      expect(text).not.toContain(EMAIL)
    }
    await gatewayRefused([{ role: "robot", content: EMAIL }], "input[0].role")
    await gatewayRefused([{ type: "function_call", call_id: "c", name: "f" }], "input[0].arguments")
    await gatewayRefused([{ type: "function_call_output", output: EMAIL }], "input[0].call_id")
    expect(provider.received).toHaveLength(0)
    neverSeen()
  })

  it("a stream the provider cuts before response.completed ends there: no response.completed, no receipt frame, no hang", async () => {
    provider.setBehaviour({ kind: "cut-stream", afterChunks: 6 })
    try {
      const res = await fetch(`${proxy.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local-chat", input: prompt, stream: true }) })
      expect(res.status).toBe(200)
      const events = (await res.text()).split("\n\n").filter(Boolean).map((f) => /^event: (.*)$/m.exec(f)?.[1])
      expect(events.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"])
      expect(events).not.toContain("response.completed")
      expect(events).not.toContain("receipt-v2")
      neverSeen()
    } finally {
      provider.setBehaviour({ kind: "normal" })
    }
  })

  it("a hosted tool is refused by the gateway with tool_not_supported, passed through", async () => {
    const res = await fetch(`${proxy.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", input: prompt, tools: [{ type: "web_search" }] })
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ code: "tool_not_supported", details: { path: "tools[0].type" } })
    expect(provider.received).toHaveLength(0)
  })
})

describe("Anthropic token counting through the local proxy", () => {
  it("messages.countTokens: counted on the tokenised body, nothing billed, no receipt", async () => {
    const anthropic = new Anthropic({ apiKey: "anything", baseURL: proxy.url, maxRetries: 0 })
    const { data: counted, response } = await anthropic.messages
      .countTokens({ model: "local-chat", system: `The user is ${EMAIL}.`, messages: [{ role: "user", content: prompt }] })
      .withResponse()
    expect(provider.received).toHaveLength(1)
    expect(provider.received[0]!.path).toBe("/v1/messages/count_tokens")
    expect(counted.input_tokens).toBe(Math.ceil(provider.received[0]!.body.length / 4))
    expect(relayEgress().map((e) => new URL(e.url).pathname)).toEqual(["/api/v1/messages/count_tokens"])
    expect(response.headers.get("x-service-receipt-v2")).toBeNull()
    neverSeen()
  })

  it("beta.messages.countTokens as Claude Code calls it (?beta=true, anthropic-beta, tools): counted on the tokenised body", async () => {
    const anthropic = new Anthropic({ apiKey: "anything", baseURL: proxy.url, maxRetries: 0 })
    const counted = await anthropic.beta.messages.countTokens({
      model: "local-chat",
      betas: ["token-counting-2024-11-01"],
      system: [{ type: "text", text: `The user is ${EMAIL}.` }],
      messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
      tools: [{ name: "Read", description: "Reads a file", input_schema: { type: "object", properties: { file_path: { type: "string" } } } }]
    })
    expect(provider.received).toHaveLength(1)
    expect(provider.received[0]!.path).toBe("/v1/messages/count_tokens")
    expect(counted.input_tokens).toBe(Math.ceil(provider.received[0]!.body.length / 4))
    neverSeen()
  })

  it("a gateway refusal comes back in Anthropic's error shape", async () => {
    const anthropic = new Anthropic({ apiKey: "anything", baseURL: proxy.url, maxRetries: 0 })
    const error = await anthropic.messages.countTokens({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.NotFoundError)
    expect((error as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: "error", error: { type: "not_found_error" } })
  })
})
