import Anthropic from "@anthropic-ai/sdk"
import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeCompletionTokens, fakePromptTokens, type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { attestedHeaders, attestingFetch } from "../support/engine.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fetchJwks, independentlyVerify } from "../support/receipts.ts"
import { balanceMicros, fundedKey } from "../support/tenant.ts"

// One fake provider plays both real providers: Anthropic (Messages format, for Claude models) and OpenAI (Chat
// Completions format, for GPT models). A Claude model called on /chat/completions and a GPT model called on
// /messages are translated by the gateway; the official SDKs on the client side see their own format only.
let provider: FakeProvider
let gw: TestGateway
let apiKey: string
let orgId: string
const CLAUDE = "claude-haiku-4-5-20251001"
const GPT = "gpt-4o-mini"

beforeAll(async () => {
  provider = await startFakeProvider({ port: 0 })
  const dir = mkdtempSync(join(tmpdir(), "pr-translation-"))
  writeFileSync(join(dir, "anthropic"), "pooled-anthropic-key", { mode: 0o600 })
  writeFileSync(join(dir, "openai"), "pooled-openai-key", { mode: 0o600 })
  gw = await startTestGateway({
    LOCAL_PROVIDER_URL: provider.url,
    PROVIDER_ANTHROPIC_BASE_URL: provider.url,
    PROVIDER_ANTHROPIC_API_KEY_FILE: join(dir, "anthropic"),
    PROVIDER_OPENAI_BASE_URL: provider.url,
    PROVIDER_OPENAI_API_KEY_FILE: join(dir, "openai")
  })
  ;({ apiKey, orgId } = await fundedKey(gw))
})
afterAll(async () => {
  await gw.close()
  await provider.close()
})
beforeEach(() => provider.reset())

const openai = () => new OpenAI({ apiKey, baseURL: `${gw.url}/api/v1`, fetch: attestingFetch("chat.completions"), maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey, baseURL: `${gw.url}/api`, fetch: attestingFetch("messages"), maxRetries: 0 })

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")
const jcsSha256 = (value: unknown) => sha256(canonicalize(value)!)
const upstreamJson = (i = 0) => JSON.parse(provider.received[i].body.toString("utf8"))
const receiptOf = (headers: Headers) => JSON.parse(Buffer.from(headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))
const usageRow = async (requestId: string) =>
  (await gw.query<{ provider: string; model: string; input_tokens: number; output_tokens: number; estimated: boolean; partial: boolean }>(
    "SELECT provider, model, input_tokens, output_tokens, estimated, partial FROM usage_records WHERE request_id = $1",
    requestId
  ))

/** The receipt proves what went upstream: the translated body's JCS hash, and the client's body hash beside it. */
const expectTranslatedReceipt = async (receipt: any, clientBody: unknown, from: string, to: string) => {
  // The gateway sends the translated body in its JCS form, so the bytes the provider received hash to the receipt.
  expect(receipt.hash_upstream_request).toBe(sha256(provider.received[0].body))
  expect(receipt.hash_upstream_request).toBe(jcsSha256(upstreamJson()))
  expect(receipt.extensions.translation).toEqual({ from, to, hash_client_request: jcsSha256(clientBody) })
  expect(receipt.hash_upstream_request).not.toBe(receipt.extensions.translation.hash_client_request)
  expect(await independentlyVerify(receipt, await fetchJwks(gw.url))).toBe(true)
}

/** A raw attested call (to see the exact bytes and the stream trailer). */
const rawCall = async (route: "chat.completions" | "messages", body: unknown) => {
  const text = JSON.stringify(body)
  return fetch(`${gw.url}/api/v1/${route === "messages" ? "messages" : "chat/completions"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders(route, text)) },
    body: text
  })
}
const trailerOf = (sse: string) => JSON.parse(sse.slice(sse.indexOf("event: receipt-v2\ndata: ") + "event: receipt-v2\ndata: ".length).trim())

const WEATHER_TOOL = {
  type: "function" as const,
  function: { name: "lookup", description: "Looks a value up", parameters: { type: "object", properties: { text: { type: "string" } } } }
}

describe("an OpenAI chat completion served by an Anthropic-format provider", () => {
  it("translates system prompts and multi-part content, answers in the OpenAI shape, bills the provider's usage and says so in the receipt", async () => {
    const request = {
      model: CLAUDE,
      max_tokens: 100,
      temperature: 0.2,
      stop: "END",
      messages: [
        { role: "system" as const, content: "Be brief about <PERSON_1>." },
        { role: "user" as const, content: [{ type: "text" as const, text: "Hello" }, { type: "text" as const, text: "<EMAIL_1>" }] }
      ]
    }
    const { data, response } = await openai().chat.completions.create(request).withResponse()
    expect(data.object).toBe("chat.completion")
    expect(data.choices[0].message).toMatchObject({ role: "assistant", content: "Echo: Hello\n<EMAIL_1>" })
    expect(data.choices[0].finish_reason).toBe("stop")
    expect(data.id).toMatch(/^msg_fake_/)

    expect(provider.received).toHaveLength(1)
    expect(provider.received[0].path).toBe("/v1/messages")
    expect(provider.received[0].headers["x-api-key"]).toBe("pooled-anthropic-key")
    expect(provider.received[0].headers["anthropic-version"]).toBe("2023-06-01")
    expect(provider.received[0].headers.authorization).toBeUndefined()
    expect(upstreamJson()).toEqual({
      model: CLAUDE,
      max_tokens: 100,
      temperature: 0.2,
      stop_sequences: ["END"],
      system: [{ type: "text", text: "Be brief about <PERSON_1>." }],
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }, { type: "text", text: "<EMAIL_1>" }] }]
    })

    const promptTokens = fakePromptTokens(provider.received[0].body.length)
    const completionTokens = fakeCompletionTokens("Echo: Hello\n<EMAIL_1>")
    expect(data.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens })
    expect(await usageRow(data.id)).toEqual([
      { provider: "anthropic", model: CLAUDE, input_tokens: promptTokens, output_tokens: completionTokens, estimated: false, partial: false }
    ])
    const receipt = receiptOf(response.headers)
    expect(receipt).toMatchObject({ provider: "anthropic", model: CLAUDE, input_tokens: promptTokens, output_tokens: completionTokens })
    await expectTranslatedReceipt(receipt, request, "openai", "anthropic")
  })

  it("round-trips a tool call: tools and the call become tool_use, the tool result a tool_result block", async () => {
    const first = await openai().chat.completions.create({
      model: CLAUDE,
      tools: [WEATHER_TOOL],
      tool_choice: "required",
      messages: [{ role: "user", content: "find <PERSON_2>" }]
    })
    expect(first.choices[0].finish_reason).toBe("tool_calls")
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    expect(call).toMatchObject({ type: "function", function: { name: "lookup" } })
    expect(JSON.parse(call.function.arguments)).toEqual({ text: "find <PERSON_2>" })
    expect(upstreamJson()).toMatchObject({
      max_tokens: 4096,
      tools: [{ name: "lookup", description: "Looks a value up", input_schema: WEATHER_TOOL.function.parameters }],
      tool_choice: { type: "any" }
    })

    provider.reset()
    const second = await openai().chat.completions.create({
      model: CLAUDE,
      tools: [WEATHER_TOOL],
      messages: [
        { role: "user", content: "find <PERSON_2>" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "found <PHONE_1>" }
      ]
    })
    expect(second.choices[0].message.content).toBe("Echo: found <PHONE_1>")
    expect(second.choices[0].finish_reason).toBe("stop")
    expect(upstreamJson().messages).toEqual([
      { role: "user", content: [{ type: "text", text: "find <PERSON_2>" }] },
      { role: "assistant", content: [{ type: "tool_use", id: call.id, name: "lookup", input: { text: "find <PERSON_2>" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "found <PHONE_1>" }] }
    ])
  })

  it("streams: Anthropic events arrive as chat.completion.chunk frames, then the usage chunk, [DONE] and the receipt trailer", async () => {
    const request = { model: CLAUDE, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "one two three" }] }
    const res = await rawCall("chat.completions", request)
    expect(res.status).toBe(200)
    const sse = await res.text()
    expect(sse).not.toContain("event: message_start")
    const frames = sse.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)))
    expect(frames.every((f) => f.object === "chat.completion.chunk")).toBe(true)
    expect(frames.map((f) => f.choices[0]?.delta?.content ?? "").join("")).toBe("Echo: one two three")
    expect(frames.at(-2).choices[0].finish_reason).toBe("stop")
    const usage = frames.at(-1).usage
    expect(frames.at(-1).choices).toEqual([])
    expect(sse.indexOf("data: [DONE]\n\n")).toBeLessThan(sse.indexOf("event: receipt-v2"))
    expect(upstreamJson()).toMatchObject({ stream: true, max_tokens: 4096 })
    expect(upstreamJson().stream_options).toBeUndefined()

    const receipt = trailerOf(sse)
    expect(receipt).toMatchObject({ provider: "anthropic", input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens })
    expect(usage.completion_tokens).toBe(fakeCompletionTokens("Echo: one two three"))
    await expectTranslatedReceipt(receipt, request, "openai", "anthropic")
    // The upstream response hash covers the provider's own (Anthropic) bytes, not the translated frames.
    expect(receipt.hash_upstream_response).not.toBe(sha256(sse.slice(0, sse.indexOf("event: receipt-v2"))))
  })

  it("streams a tool call through the official SDK: tool_use input_json deltas become tool_calls argument deltas", async () => {
    const stream = await openai().chat.completions.create({
      model: CLAUDE,
      stream: true,
      tools: [WEATHER_TOOL],
      messages: [{ role: "user", content: "find <PERSON_3>" }]
    })
    let args = ""
    let name: string | undefined
    let finish: string | null = null
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta
      for (const call of delta?.tool_calls ?? []) {
        expect(call.index).toBe(0)
        name ??= call.function?.name
        args += call.function?.arguments ?? ""
      }
      finish = chunk.choices[0]?.finish_reason ?? finish
    }
    expect(name).toBe("lookup")
    expect(JSON.parse(args)).toEqual({ text: "find <PERSON_3>" })
    expect(finish).toBe("tool_calls")
  })
})

describe("an Anthropic messages call served by an OpenAI-format provider", () => {
  it("translates the system prompt, blocks and max_tokens, answers in the Anthropic shape, bills and says so in the receipt", async () => {
    const request = {
      model: GPT,
      max_tokens: 64,
      system: "Answer about <PERSON_1>.",
      stop_sequences: ["END"],
      messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi" }, { type: "text" as const, text: "<IBAN_1>" }] }]
    }
    const { data, response } = await anthropic().messages.create(request).withResponse()
    expect(data).toMatchObject({ type: "message", role: "assistant", stop_reason: "end_turn", stop_sequence: null })
    expect(data.content).toEqual([{ type: "text", text: "Echo: Hi\n<IBAN_1>" }])
    expect(provider.received[0].path).toBe("/v1/chat/completions")
    expect(provider.received[0].headers.authorization).toBe("Bearer pooled-openai-key")
    expect(provider.received[0].headers["x-api-key"]).toBeUndefined()
    // OpenAI's own API takes max_completion_tokens.
    expect(upstreamJson()).toEqual({
      model: GPT,
      max_completion_tokens: 64,
      stop: ["END"],
      messages: [
        { role: "system", content: "Answer about <PERSON_1>." },
        { role: "user", content: [{ type: "text", text: "Hi" }, { type: "text", text: "<IBAN_1>" }] }
      ]
    })
    const input = fakePromptTokens(provider.received[0].body.length)
    expect(data.usage).toMatchObject({ input_tokens: input, output_tokens: fakeCompletionTokens("Echo: Hi\n<IBAN_1>") })
    expect(await usageRow(data.id)).toEqual([
      { provider: "openai", model: GPT, input_tokens: input, output_tokens: data.usage.output_tokens, estimated: false, partial: false }
    ])
    await expectTranslatedReceipt(receiptOf(response.headers), request, "anthropic", "openai")
  })

  it("round-trips tool use: tool_use blocks from tool_calls, tool_result blocks as tool messages", async () => {
    const tools = [{ name: "lookup", description: "Looks a value up", input_schema: { type: "object" as const, properties: { text: { type: "string" } } } }]
    const first = await anthropic().messages.create({
      model: GPT,
      max_tokens: 64,
      tools,
      tool_choice: { type: "tool", name: "lookup" },
      messages: [{ role: "user", content: "find <EMAIL_2>" }]
    })
    expect(first.stop_reason).toBe("tool_use")
    const use = first.content[0] as Anthropic.ToolUseBlock
    expect(use).toMatchObject({ type: "tool_use", name: "lookup", input: { text: "find <EMAIL_2>" } })
    expect(upstreamJson()).toMatchObject({
      tools: [{ type: "function", function: { name: "lookup", description: "Looks a value up", parameters: tools[0].input_schema } }],
      tool_choice: { type: "function", function: { name: "lookup" } }
    })

    provider.reset()
    const second = await anthropic().messages.create({
      model: GPT,
      max_tokens: 64,
      tools,
      messages: [
        { role: "user", content: "find <EMAIL_2>" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "it is <PHONE_2>" }] }] }
      ]
    })
    expect(second.content).toEqual([{ type: "text", text: "Echo: it is <PHONE_2>" }])
    expect(upstreamJson().messages).toEqual([
      { role: "user", content: "find <EMAIL_2>" },
      { role: "assistant", content: null, tool_calls: [{ id: use.id, type: "function", function: { name: "lookup", arguments: JSON.stringify(use.input) } }] },
      { role: "tool", tool_call_id: use.id, content: "it is <PHONE_2>" }
    ])
  })

  it("streams through the official SDK: chunks become message events, usage arrives in message_delta, the receipt trailer follows", async () => {
    const final = await anthropic().messages.stream({ model: GPT, max_tokens: 64, messages: [{ role: "user", content: "stream me please" }] }).finalMessage()
    expect(final.content).toEqual([{ type: "text", text: "Echo: stream me please" }])
    expect(final.stop_reason).toBe("end_turn")
    // Usage is asked for upstream (OpenAI sends it only on request) and billed from it.
    expect(upstreamJson().stream_options).toEqual({ include_usage: true })
    const input = fakePromptTokens(provider.received[0].body.length)
    expect(final.usage).toMatchObject({ input_tokens: input, output_tokens: fakeCompletionTokens("Echo: stream me please") })
    expect(await usageRow(final.id)).toMatchObject([{ input_tokens: input, output_tokens: final.usage.output_tokens, estimated: false, partial: false }])

    provider.reset()
    const request = { model: GPT, max_tokens: 64, stream: true, messages: [{ role: "user", content: "again" }] }
    const sse = await (await rawCall("messages", request)).text()
    expect(sse.indexOf("event: message_stop")).toBeLessThan(sse.indexOf("event: receipt-v2"))
    expect(sse).not.toContain("[DONE]")
    await expectTranslatedReceipt(trailerOf(sse), request, "anthropic", "openai")
  })

  it("streams tool use: tool_calls deltas become a tool_use block with input_json deltas", async () => {
    const final = await anthropic().messages.stream({
      model: GPT,
      max_tokens: 64,
      tools: [{ name: "lookup", input_schema: { type: "object" } }],
      messages: [{ role: "user", content: "find <PERSON_4>" }]
    }).finalMessage()
    expect(final.stop_reason).toBe("tool_use")
    expect(final.content).toEqual([{ type: "tool_use", id: expect.stringMatching(/^call_fake_/), name: "lookup", input: { text: "find <PERSON_4>" } }])
  })
})

describe("the countersignature of a translated call", () => {
  it("names the translation, keeps the attested egress hash beside the translated body's hash, and verifies with its attestation", async () => {
    const body = { model: GPT, max_tokens: 32, messages: [{ role: "user", content: "sign <EMAIL_3>" }] }
    const text = JSON.stringify(body)
    const headers = await attestedHeaders("messages", text)
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
      body: text
    })
    expect(res.status).toBe(200)
    const v2 = receiptOf(res.headers)
    const v3Header = res.headers.get("x-service-receipt-v3")!
    const v3 = JSON.parse(Buffer.from(v3Header, "base64").toString("utf8"))
    expect(v3).toMatchObject({
      v: "v3-countersignature",
      provider: "openai",
      model: GPT,
      receipt_jti: v2.jti,
      egress_sha256: jcsSha256(body),
      hash_upstream_request: sha256(provider.received[0].body),
      translation: { from: "anthropic", to: "openai" }
    })
    const verified = await fetch(`${gw.url}/api/v1/receipts/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ receipt: v3Header, attestation: headers["x-service-attestation"] })
    })
    expect(await verified.json()).toMatchObject({ valid: true })
    // Without the translation member the two hashes would have to match: a tampered copy fails.
    const { translation: _t, ...untranslated } = v3
    const tampered = await fetch(`${gw.url}/api/v1/receipts/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ receipt: untranslated, attestation: headers["x-service-attestation"] })
    })
    expect(await tampered.json()).toMatchObject({ valid: false })
  })
})

describe("refusals and faults of translated calls", () => {
  it("refuses a field the other format cannot express with 400 invalid_request naming it; nothing forwarded, nothing billed", async () => {
    const before = await balanceMicros(gw, orgId)
    const res = await rawCall("chat.completions", { model: CLAUDE, logprobs: true, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.error).toMatchObject({ code: "invalid_request", details: { path: "logprobs" } })
    expect(body.error.message).toContain("anthropic")
    const thinking = await rawCall("messages", { model: GPT, max_tokens: 10, thinking: { type: "enabled", budget_tokens: 5 }, messages: [{ role: "user", content: "x" }] })
    expect(thinking.status).toBe(400)
    expect((await thinking.json()).error.details.path).toBe("thinking")
    expect(provider.received).toHaveLength(0)
    expect(await balanceMicros(gw, orgId)).toBe(before)
  })

  it("answers 502 for a provider answer that is not its format's shape, billing nothing", async () => {
    const before = await balanceMicros(gw, orgId)
    provider.setBehaviour({ kind: "status", status: 200, body: { unexpected: true } })
    const res = await rawCall("chat.completions", { model: CLAUDE, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: "upstream_error", provider: "anthropic" })
    expect(provider.received).toHaveLength(1)
    expect(await balanceMicros(gw, orgId)).toBe(before)
  })

  it("ends a translated stream the provider cuts without its terminal frames and without a receipt; what arrived is metered as partial", async () => {
    provider.setBehaviour({ kind: "cut-stream", afterChunks: 4 })
    const res = await rawCall("messages", { model: GPT, max_tokens: 64, stream: true, messages: [{ role: "user", content: "a b c d e f" }] })
    const sse = await res.text()
    expect(sse).toContain("event: message_start")
    expect(sse).not.toContain("event: message_stop")
    expect(sse).not.toContain("receipt-v2")
    await expect.poll(async () =>
      (await gw.query<{ partial: boolean }>("SELECT partial FROM usage_records WHERE org_id = $1 AND provider = 'openai' ORDER BY finished_at DESC LIMIT 1", orgId))[0]?.partial
    ).toBe(true)
  })
})
