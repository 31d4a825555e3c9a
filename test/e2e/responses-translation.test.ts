import { createOpenAI } from "@ai-sdk/openai"
import { streamText } from "ai"
import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeCompletionTokens, fakePromptTokens, fakeReplyText, type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { detokenisedSse } from "../../sdks/typescript/src/relayExchange.ts"
import { attestedHeaders, attestingFetch } from "../support/engine.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fetchJwks, independentlyVerify } from "../support/receipts.ts"
import { fundedKey } from "../support/tenant.ts"

/**
 * The Responses API for models whose provider has no Responses endpoint (issue 34): translated through the chat
 * completion shape to an OpenAI-compatible provider (Mistral), to Anthropic's Messages API (Claude) and to Gemini's
 * generateContent, whole and streamed, with function tools; billed from the provider's usage, the receipt naming the
 * translation. One fake provider plays all three providers.
 */
let provider: FakeProvider
let gw: TestGateway
let apiKey: string
let orgId: string
const CLAUDE = "claude-haiku-4-5-20251001"
const MISTRAL = "mistral-small-latest"
const GEMINI = "gemini-2.5-flash"

beforeAll(async () => {
  provider = await startFakeProvider({ port: 0, streamPieceChars: 4 })
  const dir = mkdtempSync(join(tmpdir(), "pr-responses-translation-"))
  for (const name of ["anthropic", "mistral", "google"]) writeFileSync(join(dir, name), `pooled-${name}-key`, { mode: 0o600 })
  gw = await startTestGateway({
    LOCAL_PROVIDER_URL: provider.url,
    PROVIDER_ANTHROPIC_BASE_URL: provider.url,
    PROVIDER_ANTHROPIC_API_KEY_FILE: join(dir, "anthropic"),
    PROVIDER_MISTRAL_BASE_URL: provider.url,
    PROVIDER_MISTRAL_API_KEY_FILE: join(dir, "mistral"),
    PROVIDER_GOOGLE_BASE_URL: provider.url,
    PROVIDER_GOOGLE_API_KEY_FILE: join(dir, "google")
  })
  ;({ apiKey, orgId } = await fundedKey(gw))
})
afterAll(async () => {
  await gw.close()
  await provider.close()
})
beforeEach(() => provider.reset())

/** What client.fetch and the local proxy do with an answer: the Responses stream's receipt re-framed for SDKs. */
const clientFetch: typeof fetch = async (input, init) => {
  const res = await attestingFetch("responses")(input, init)
  if (!res.ok || res.body === null || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res
  return new Response(detokenisedSse("responses", new Map(), res.body), { status: res.status, headers: res.headers })
}
const openai = () => new OpenAI({ apiKey, baseURL: `${gw.url}/api/v1`, fetch: clientFetch, maxRetries: 0 })

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")
const jcsSha256 = (value: unknown) => sha256(canonicalize(value)!)
const upstreamJson = (i = 0) => JSON.parse(provider.received[i]!.body.toString("utf8"))
const receiptOf = (headers: Headers) => JSON.parse(Buffer.from(headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))
const usageRow = async (requestId: string) =>
  gw.query<{ provider: string; model: string; capability: string; input_tokens: number; output_tokens: number; estimated: boolean; partial: boolean }>(
    "SELECT provider, model, capability, input_tokens, output_tokens, estimated, partial FROM usage_records WHERE request_id = $1",
    requestId
  )

const rawCall = async (body: unknown) => {
  const text = JSON.stringify(body)
  return fetch(`${gw.url}/api/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("responses", text)) },
    body: text
  })
}
const eventsOf = (sse: string) =>
  sse.split("\n\n").filter(Boolean).map((frame) => ({ event: /^event: (.*)$/m.exec(frame)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) }))

const TOOL = { type: "function" as const, name: "lookup", description: "Looks a value up", parameters: { type: "object", properties: { text: { type: "string" } } }, strict: false }

describe("the Responses API on an Anthropic-format provider (Claude)", () => {
  it("JSON: instructions and items become a Messages request; the answer is a Response; billed from Anthropic's usage; the receipt names the translation", async () => {
    const request = {
      model: CLAUDE,
      instructions: "Be brief about <PERSON_1>.",
      max_output_tokens: 100,
      input: [{ role: "user" as const, content: [{ type: "input_text" as const, text: "Hello" }, { type: "input_text" as const, text: "<EMAIL_1>" }] }]
    }
    const { data, response } = await openai().responses.create(request).withResponse()
    expect(data).toMatchObject({ object: "response", status: "completed", model: CLAUDE, instructions: "Be brief about <PERSON_1>." })
    expect(data.output_text).toBe(fakeReplyText("Hello\n<EMAIL_1>"))
    expect(provider.received[0]!.path).toBe("/v1/messages")
    expect(upstreamJson()).toEqual({
      model: CLAUDE,
      max_tokens: 100,
      system: [{ type: "text", text: "Be brief about <PERSON_1>." }],
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }, { type: "text", text: "<EMAIL_1>" }] }]
    })
    const input = fakePromptTokens(provider.received[0]!.body.length)
    const output = fakeCompletionTokens(fakeReplyText("Hello\n<EMAIL_1>"))
    expect(data.usage).toMatchObject({ input_tokens: input, output_tokens: output, total_tokens: input + output })
    expect(await usageRow(data.id)).toEqual([{ provider: "anthropic", model: CLAUDE, capability: "responses", input_tokens: input, output_tokens: output, estimated: false, partial: false }])
    const receipt = receiptOf(response.headers)
    expect(receipt.hash_upstream_request).toBe(sha256(provider.received[0]!.body))
    expect(receipt.extensions.translation).toEqual({ from: "openai-responses", to: "anthropic", hash_client_request: jcsSha256(request) })
    expect(await independentlyVerify(receipt, await fetchJwks(gw.url))).toBe(true)
  })

  it("streamed: Anthropic's events become the Responses events, usage from response.completed, then the receipt", async () => {
    const res = await rawCall({ model: CLAUDE, stream: true, input: "alpha <EMAIL_1> beta" })
    expect(res.status).toBe(200)
    const events = eventsOf(await res.text())
    const names = events.map((e) => e.event)
    expect(names.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"])
    expect(names.slice(-5)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed", "receipt-v2"])
    for (const e of events.slice(0, -1)) expect(e.data.type).toBe(e.event)
    expect(events.slice(0, -1).map((e) => e.data.sequence_number)).toEqual(events.slice(0, -1).map((_, i) => i))
    const text = events.filter((e) => e.event === "response.output_text.delta").map((e) => e.data.delta).join("")
    expect(text).toBe(fakeReplyText("alpha <EMAIL_1> beta"))
    const completed = events.at(-2)!.data.response
    expect(completed.output[0].content[0].text).toBe(text)
    const receipt = events.at(-1)!.data
    expect(receipt.output_tokens).toBe(fakeCompletionTokens(text))
    expect(receipt.extensions.translation.to).toBe("anthropic")
    expect(await usageRow(completed.id)).toEqual([expect.objectContaining({ capability: "responses", estimated: false, partial: false, output_tokens: fakeCompletionTokens(text) })])
    expect(upstreamJson().stream).toBe(true)
  })

  it("the official SDK's responses.stream() and the AI SDK's streamText read the translated stream", async () => {
    const final = await openai().responses.stream({ model: CLAUDE, input: "gamma delta" }).finalResponse()
    expect(final.output_text).toBe(fakeReplyText("gamma delta"))
    const errors: Array<unknown> = []
    const result = streamText({
      model: createOpenAI({ baseURL: `${gw.url}/api/v1`, apiKey, fetch: clientFetch }).responses(CLAUDE),
      prompt: "epsilon",
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error)
    })
    expect(await result.text).toBe(fakeReplyText("epsilon"))
    expect(errors).toEqual([])
  })

  it("a function tool round trip: function_call becomes tool_use, function_call_output a tool_result; streamed arguments assemble", async () => {
    const client = openai()
    const first = await client.responses.create({ model: CLAUDE, input: "look up <EMAIL_1>", tools: [TOOL] })
    const call = first.output[0]!
    if (call.type !== "function_call") throw new Error("expected a function call")
    expect(call).toMatchObject({ name: "lookup", status: "completed" })
    expect(JSON.parse(call.arguments)).toEqual({ text: "look up <EMAIL_1>" })
    expect(upstreamJson().tools).toEqual([{ name: "lookup", description: "Looks a value up", input_schema: TOOL.parameters }])

    const second = await client.responses.create({
      model: CLAUDE,
      tools: [TOOL],
      input: [
        { role: "user", content: "look up <EMAIL_1>" },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "found <PERSON_1>" }
      ]
    })
    expect(second.output_text).toBe(fakeReplyText("found <PERSON_1>"))
    expect(upstreamJson(1).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "look up <EMAIL_1>" }] },
      { role: "assistant", content: [{ type: "tool_use", id: call.call_id, name: "lookup", input: { text: "look up <EMAIL_1>" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.call_id, content: "found <PERSON_1>" }] }
    ])

    const streamed = await client.responses.stream({ model: CLAUDE, input: "look up <EMAIL_1>", tools: [TOOL] }).finalResponse()
    const streamedCall = streamed.output[0]!
    if (streamedCall.type !== "function_call") throw new Error("expected a function call")
    expect(JSON.parse(streamedCall.arguments)).toEqual({ text: "look up <EMAIL_1>" })
  })

  it("a stream the provider cuts ends without response.completed and without the trailer, metered as partial", async () => {
    const { apiKey: key, orgId: org } = await fundedKey(gw)
    provider.setBehaviour({ kind: "cut-stream", afterChunks: 4 })
    const text = JSON.stringify({ model: CLAUDE, stream: true, input: "one two three four five six seven" })
    const res = await fetch(`${gw.url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(await attestedHeaders("responses", text)) },
      body: text
    })
    const sse = await res.text()
    expect(sse).toContain("response.created")
    expect(sse).not.toContain("response.completed")
    expect(sse).not.toContain("receipt-v2")
    for (let i = 0; i < 100 && (await gw.query("SELECT 1 FROM usage_records WHERE org_id = $1", org)).length === 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect(await gw.query<{ partial: boolean }>("SELECT partial FROM usage_records WHERE org_id = $1", org)).toEqual([{ partial: true }])
  })
})

describe("the Responses API on an OpenAI-compatible chat provider (Mistral)", () => {
  it("JSON and streamed: the body becomes a chat completion (usage asked for on streams), the answer a Response", async () => {
    const { data, response } = await openai().responses.create({ model: MISTRAL, input: "hi there", max_output_tokens: 50, temperature: 0.3 }).withResponse()
    expect(data.output_text).toBe(fakeReplyText("hi there"))
    expect(provider.received[0]!.path).toBe("/v1/chat/completions")
    expect(upstreamJson()).toEqual({ model: MISTRAL, messages: [{ role: "user", content: "hi there" }], max_tokens: 50, temperature: 0.3 })
    expect(receiptOf(response.headers).extensions.translation).toMatchObject({ from: "openai-responses", to: "openai" })
    expect(await usageRow(data.id)).toEqual([expect.objectContaining({ provider: "mistral", capability: "responses", estimated: false })])

    const final = await openai().responses.stream({ model: MISTRAL, input: "streamed hi" }).finalResponse()
    expect(final.output_text).toBe(fakeReplyText("streamed hi"))
    expect(final.usage?.output_tokens).toBe(fakeCompletionTokens(fakeReplyText("streamed hi")))
    expect(upstreamJson(1)).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })
})

describe("the Responses API on Gemini's own format", () => {
  it("JSON and streamed", async () => {
    const data = await openai().responses.create({ model: GEMINI, input: "hola" })
    expect(data.output_text).toBe(fakeReplyText("hola"))
    expect(provider.received[0]!.path).toBe(`/v1beta/models/${GEMINI}:generateContent`)
    const final = await openai().responses.stream({ model: GEMINI, input: "hola again" }).finalResponse()
    expect(final.output_text).toBe(fakeReplyText("hola again"))
    expect(await usageRow(final.id)).toEqual([expect.objectContaining({ provider: "google", capability: "responses", estimated: false, partial: false })])
  })
})

describe("what a chat completion cannot carry is refused, nothing forwarded", () => {
  const refused = async (body: Record<string, unknown>, code: string, path: string) => {
    const res = await rawCall(body)
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ code, details: { path } })
    expect(provider.received).toHaveLength(0)
  }

  it("background, truncation auto, item references, include, reasoning, a custom tool; hosted tools with tool_not_supported", async () => {
    // previous_response_id never gets here: the egress policy refuses it on every route (egress_policy_violation).
    await refused({ model: CLAUDE, input: "x", background: true }, "invalid_request", "background")
    await refused({ model: CLAUDE, input: "x", truncation: "auto" }, "invalid_request", "truncation")
    await refused({ model: CLAUDE, input: [{ type: "item_reference", id: "msg_1" }] }, "invalid_request", "input[0].type")
    await refused({ model: MISTRAL, input: "x", include: ["reasoning.encrypted_content"] }, "invalid_request", "include")
    await refused({ model: MISTRAL, input: "x", reasoning: { effort: "high" } }, "invalid_request", "reasoning")
    await refused({ model: MISTRAL, input: "x", tools: [{ type: "custom", name: "c" }] }, "invalid_request", "tools[0].type")
    await refused({ model: CLAUDE, input: "x", tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] }, "tool_not_supported", "tools[0].type")
  })

  it("store and metadata change nothing about the answer and are left out; reasoning items sent back are left out", async () => {
    const data = await openai().responses.create({
      model: MISTRAL,
      store: true,
      metadata: { ticket: "42" },
      input: [{ type: "reasoning", id: "rs_1", summary: [] }, { role: "user", content: "plain" }]
    })
    expect(data.output_text).toBe(fakeReplyText("plain"))
    expect(upstreamJson()).toEqual({ model: MISTRAL, messages: [{ role: "user", content: "plain" }] })
  })
})

it("the model list says every conversation model serves the Responses API", async () => {
  const { data } = await (await fetch(`${gw.url}/api/v1/models?include=unavailable`, { headers: { authorization: `Bearer ${apiKey}` } })).json()
  const byId = new Map((data as Array<{ id: string; capabilities: Array<string> }>).map((m) => [m.id, m.capabilities]))
  expect(byId.get(CLAUDE)).toContain("responses")
  expect(byId.get(GEMINI)).toContain("responses")
  expect(byId.get("text-embedding-3-small")).not.toContain("responses")
  expect(orgId).toMatch(/^org_/)
})
