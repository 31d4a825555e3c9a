import Anthropic from "@anthropic-ai/sdk"
import canonicalize from "canonicalize"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { setRoutingFallbacks } from "../../layers/AdminOperations.ts"
import { fakeCompletionTokens, fakePromptTokens, type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { attestedHeaders, attestingFetch } from "../support/engine.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fetchJwks, independentlyVerify, portalToken } from "../support/receipts.ts"
import { balanceMicros, fundedKey } from "../support/tenant.ts"
import { UPSTREAM_TIMER_SLACK_MS } from "../support/upstreamTimerSlack.ts"

// Google's Gemini models are served through Gemini's own generateContent API (not its OpenAI-compatibility layer):
// a fake provider plays Google (native routes, key in x-goog-api-key), another the built-in `local` provider as a
// fallback. The official OpenAI and Anthropic SDKs are the clients; they see only their own formats.
let google: FakeProvider
let local: FakeProvider
let gw: TestGateway
let apiKey: string
let orgId: string
const GEMINI = "gemini-2.5-flash"
const GOOGLE_TIMEOUT_MS = 700
const GENERATE = `/v1beta/models/${GEMINI}:generateContent`
const STREAM = `/v1beta/models/${GEMINI}:streamGenerateContent`

beforeAll(async () => {
  google = await startFakeProvider({ port: 0 })
  local = await startFakeProvider({ port: 0 })
  const dir = mkdtempSync(join(tmpdir(), "pr-gemini-"))
  writeFileSync(join(dir, "google"), "pooled-google-key", { mode: 0o600 })
  gw = await startTestGateway({
    LOCAL_PROVIDER_URL: local.url,
    PROVIDER_GOOGLE_BASE_URL: google.url,
    PROVIDER_GOOGLE_API_KEY_FILE: join(dir, "google"),
    PROVIDER_GOOGLE_TIMEOUT_MS: String(GOOGLE_TIMEOUT_MS),
    PROVIDER_COOLDOWN_MS: "0"
  })
  ;({ apiKey, orgId } = await fundedKey(gw))
})
afterAll(async () => {
  await gw.close()
  await google.close()
  await local.close()
})
beforeEach(async () => {
  google.reset()
  local.reset()
  await policy([])
})

const policy = (models: ReadonlyArray<string>) =>
  gw.runtime.runPromise(setRoutingFallbacks({ org_id: orgId, models }) as Effect.Effect<unknown, unknown, any>)
const openai = (key = apiKey) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, fetch: attestingFetch("chat.completions"), maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey, baseURL: `${gw.url}/api`, fetch: attestingFetch("messages"), maxRetries: 0 })
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")
const jcsSha256 = (value: unknown) => sha256(canonicalize(value)!)
const upstreamJson = (i = 0) => JSON.parse(google.received[i].body.toString("utf8"))
const receiptOf = (headers: Headers) => JSON.parse(Buffer.from(headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))
const trailerOf = (sse: string) => JSON.parse(sse.slice(sse.indexOf("event: receipt-v2\ndata: ") + "event: receipt-v2\ndata: ".length).trim())
const usageRows = (requestId?: string) =>
  gw.query<{ provider: string; model: string; input_tokens: number; output_tokens: number; estimated: boolean; partial: boolean }>(
    `SELECT provider, model, input_tokens, output_tokens, estimated, partial FROM usage_records WHERE org_id = $1${requestId === undefined ? "" : " AND request_id = $2"} ORDER BY finished_at`,
    ...(requestId === undefined ? [orgId] : [orgId, requestId])
  )
const rawCall = async (route: "chat.completions" | "messages", body: unknown) => {
  const text = JSON.stringify(body)
  return fetch(`${gw.url}/api/v1/${route === "messages" ? "messages" : "chat/completions"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders(route, text)) },
    body: text
  })
}

/** What went upstream is what the receipt hashes, and it says the body was translated into Gemini's format. */
const expectGeminiReceipt = async (receipt: any, clientBody: unknown, from: "openai" | "anthropic") => {
  expect(receipt).toMatchObject({ provider: "google", model: GEMINI })
  expect(receipt.hash_upstream_request).toBe(sha256(google.received[0].body))
  expect(receipt.hash_upstream_request).toBe(jcsSha256(upstreamJson()))
  expect(receipt.extensions.translation).toEqual({ from, to: "gemini", hash_client_request: jcsSha256(clientBody) })
  expect(await independentlyVerify(receipt, await fetchJwks(gw.url))).toBe(true)
}

const LOOKUP = {
  type: "function" as const,
  function: { name: "lookup", description: "Looks a value up", parameters: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false } }
}
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

describe("the OpenAI SDK on /chat/completions for a Gemini model", () => {
  it("sends Gemini's native request (system instruction, parts, generationConfig) with the key in x-goog-api-key, and answers a chat completion", async () => {
    const request = {
      model: GEMINI,
      max_tokens: 100,
      temperature: 0.2,
      stop: "END",
      messages: [
        { role: "system" as const, content: "Be brief about <PERSON_1>." },
        {
          role: "user" as const,
          content: [
            { type: "text" as const, text: "Hello" },
            { type: "image_url" as const, image_url: { url: `data:image/png;base64,${PIXEL}` } },
            { type: "text" as const, text: "<EMAIL_1>" }
          ]
        }
      ]
    }
    const { data, response } = await openai().chat.completions.create(request).withResponse()
    expect(data).toMatchObject({ object: "chat.completion", model: GEMINI, id: expect.stringMatching(/^gemini-fake-/) })
    expect(data.choices[0].message).toMatchObject({ role: "assistant", content: "Echo: Hello\n<EMAIL_1>" })
    expect(data.choices[0].finish_reason).toBe("stop")

    expect(google.received).toHaveLength(1)
    expect(google.received[0].path).toBe(GENERATE)
    expect(google.received[0].headers["x-goog-api-key"]).toBe("pooled-google-key")
    expect(google.received[0].headers.authorization).toBeUndefined()
    expect(upstreamJson()).toEqual({
      systemInstruction: { parts: [{ text: "Be brief about <PERSON_1>." }] },
      contents: [{ role: "user", parts: [{ text: "Hello" }, { inlineData: { mimeType: "image/png", data: PIXEL } }, { text: "<EMAIL_1>" }] }],
      generationConfig: { maxOutputTokens: 100, temperature: 0.2, stopSequences: ["END"] }
    })

    const prompt = fakePromptTokens(google.received[0].body.length)
    const completion = fakeCompletionTokens("Echo: Hello\n<EMAIL_1>")
    expect(data.usage).toEqual({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion })
    expect(await usageRows(data.id)).toEqual([
      { provider: "google", model: GEMINI, input_tokens: prompt, output_tokens: completion, estimated: false, partial: false }
    ])
    await expectGeminiReceipt(receiptOf(response.headers), request, "openai")
    // The countersignature keeps the attested (client) hash and names the translation that went upstream.
    const v3 = JSON.parse(Buffer.from(response.headers.get("x-service-receipt-v3")!, "base64").toString("utf8"))
    expect(v3).toMatchObject({
      provider: "google",
      translation: { from: "openai", to: "gemini" },
      egress_sha256: jcsSha256(request),
      hash_upstream_request: sha256(google.received[0].body)
    })
  })

  it("round-trips a function call: tools become functionDeclarations, the call a functionCall, the tool message a functionResponse", async () => {
    const first = await openai().chat.completions.create({
      model: GEMINI,
      tools: [LOOKUP],
      tool_choice: "required",
      messages: [{ role: "user", content: "find <PERSON_2>" }]
    })
    expect(first.choices[0].finish_reason).toBe("tool_calls")
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    expect(call).toMatchObject({ type: "function", function: { name: "lookup" } })
    expect(JSON.parse(call.function.arguments)).toEqual({ text: "find <PERSON_2>" })
    // The model's thought signature rides on the call where Google's OpenAI-compatible endpoint puts it.
    const signature = (call as unknown as { extra_content: { google: { thought_signature: string } } }).extra_content.google.thought_signature
    expect(Buffer.from(signature, "base64").toString()).toMatch(/^fake-thought-signature-\d+$/)
    expect(upstreamJson()).toMatchObject({
      tools: [{ functionDeclarations: [{ name: "lookup", description: "Looks a value up", parametersJsonSchema: LOOKUP.function.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY" } }
    })

    google.reset()
    const second = await openai().chat.completions.create({
      model: GEMINI,
      tools: [LOOKUP],
      messages: [
        { role: "user", content: "find <PERSON_2>" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "found <PHONE_1>" }
      ]
    })
    expect(second.choices[0].message.content).toBe("Echo: found <PHONE_1>")
    expect(second.choices[0].finish_reason).toBe("stop")
    expect(upstreamJson().contents).toEqual([
      { role: "user", parts: [{ text: "find <PERSON_2>" }] },
      // Sent back by the SDK with the assistant message as it came, and returned to Gemini on its functionCall part.
      { role: "model", parts: [{ functionCall: { id: call.id, name: "lookup", args: { text: "find <PERSON_2>" } }, thoughtSignature: signature }] },
      { role: "user", parts: [{ functionResponse: { id: call.id, name: "lookup", response: { content: "found <PHONE_1>" } } }] }
    ])
  })

  it("streams from streamGenerateContent?alt=sse: Gemini frames arrive as chunks, then usage, [DONE] and the receipt trailer", async () => {
    const stream = await openai().chat.completions.create({ model: GEMINI, stream: true, messages: [{ role: "user", content: "one two three" }] })
    let text = ""
    let finish: string | null = null
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? ""
      finish = chunk.choices[0]?.finish_reason ?? finish
    }
    expect(text).toBe("Echo: one two three")
    expect(finish).toBe("stop")
    // The fake answers streamGenerateContent only with alt=sse, as Google does for SSE.
    expect(google.received[0].path).toBe(STREAM)

    google.reset()
    const request = { model: GEMINI, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "four five" }] }
    const res = await rawCall("chat.completions", request)
    const sse = await res.text()
    const frames = sse.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)))
    expect(frames.every((f) => f.object === "chat.completion.chunk")).toBe(true)
    expect(frames.at(-2).choices[0].finish_reason).toBe("stop")
    const usage = frames.at(-1).usage
    expect(usage.completion_tokens).toBe(fakeCompletionTokens("Echo: four five"))
    expect(usage.prompt_tokens).toBe(fakePromptTokens(google.received[0].body.length))
    expect(sse.indexOf("data: [DONE]\n\n")).toBeLessThan(sse.indexOf("event: receipt-v2"))
    // Streaming is the method, not a body field.
    expect(upstreamJson().stream).toBeUndefined()
    const receipt = trailerOf(sse)
    expect(receipt).toMatchObject({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens })
    await expectGeminiReceipt(receipt, request, "openai")
    expect((await usageRows(frames[0].id))[0]).toMatchObject({ provider: "google", partial: false, estimated: false, output_tokens: usage.completion_tokens })
  })

  it("uses the organisation's own Google key (BYOK) in x-goog-api-key when one is stored", async () => {
    const tenant = await fundedKey(gw)
    const writer = await portalToken(gw, tenant.orgId, ["ability:byok.write"])
    const put = await fetch(`${gw.url}/api/v1/byok/google`, {
      method: "PUT",
      headers: { authorization: `Bearer ${writer}`, "content-type": "application/json" },
      body: JSON.stringify({ api_key: "AIza-byok-test-0123456789abcdef" })
    })
    expect(put.status).toBeLessThan(300)
    const answer = await openai(tenant.apiKey).chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "hi" }] })
    expect(answer.choices[0].message.content).toBe("Echo: hi")
    expect(google.received[0].headers["x-goog-api-key"]).toBe("AIza-byok-test-0123456789abcdef")
  })

  it("refuses what Gemini cannot express with 400 naming the field, forwarding nothing and holding nothing", async () => {
    const before = await balanceMicros(gw, orgId)
    const res = await rawCall("chat.completions", { model: GEMINI, tools: [LOOKUP], parallel_tool_calls: false, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ code: "invalid_request", details: { path: "parallel_tool_calls" } })
    const url = await rawCall("chat.completions", {
      model: GEMINI,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }]
    })
    expect(url.status).toBe(400)
    expect((await url.json()).error.details.path).toBe("messages[0].content[0].image_url.url")
    expect(google.received).toHaveLength(0)
    expect(await balanceMicros(gw, orgId)).toBe(before)
  })
})

describe("the Anthropic SDK on /messages for a Gemini model", () => {
  it("answers an Anthropic message from generateContent, billing Gemini's usage", async () => {
    const request = {
      model: GEMINI,
      max_tokens: 64,
      system: "Answer <PERSON_1>.",
      messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi there" }] }]
    }
    const { data, response } = await anthropic().messages.create(request).withResponse()
    expect(data).toMatchObject({ type: "message", role: "assistant", stop_reason: "end_turn", content: [{ type: "text", text: "Echo: Hi there" }] })
    expect(google.received[0].path).toBe(GENERATE)
    expect(upstreamJson()).toEqual({
      systemInstruction: { parts: [{ text: "Answer <PERSON_1>." }] },
      contents: [{ role: "user", parts: [{ text: "Hi there" }] }],
      generationConfig: { maxOutputTokens: 64 }
    })
    const prompt = fakePromptTokens(google.received[0].body.length)
    expect(data.usage).toMatchObject({ input_tokens: prompt, output_tokens: fakeCompletionTokens("Echo: Hi there") })
    await expectGeminiReceipt(receiptOf(response.headers), request, "anthropic")
  })

  it("round-trips a tool_use through functionCall / functionResponse", async () => {
    const tools = [{ name: "lookup", description: "Looks a value up", input_schema: { type: "object" as const, properties: { text: { type: "string" } } } }]
    const first = await anthropic().messages.create({ model: GEMINI, max_tokens: 64, tools, messages: [{ role: "user", content: "find <PERSON_4>" }] })
    expect(first.stop_reason).toBe("tool_use")
    const use = first.content.find((b) => b.type === "tool_use")!
    expect(use).toMatchObject({ type: "tool_use", name: "lookup", input: { text: "find <PERSON_4>" } })
    google.reset()
    const second = await anthropic().messages.create({
      model: GEMINI,
      max_tokens: 64,
      tools,
      messages: [
        { role: "user", content: "find <PERSON_4>" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "at <LOCATION_1>" }] }
      ]
    })
    expect(second.content).toEqual([{ type: "text", text: "Echo: at <LOCATION_1>" }])
    expect(upstreamJson().contents.at(-1)).toEqual({
      role: "user",
      parts: [{ functionResponse: { id: use.id, name: "lookup", response: { content: "at <LOCATION_1>" } } }]
    })
  })

  it("streams Anthropic events translated from Gemini's SSE frames, ending with message_stop and the receipt", async () => {
    const stream = anthropic().messages.stream({ model: GEMINI, max_tokens: 64, messages: [{ role: "user", content: "alpha beta" }] })
    const message = await stream.finalMessage()
    expect(message.content).toEqual([{ type: "text", text: "Echo: alpha beta" }])
    expect(message.stop_reason).toBe("end_turn")
    expect(message.usage.output_tokens).toBe(fakeCompletionTokens("Echo: alpha beta"))
    expect(google.received[0].path).toBe(STREAM)

    google.reset()
    const request = { model: GEMINI, max_tokens: 64, stream: true, messages: [{ role: "user", content: "gamma" }] }
    const sse = await (await rawCall("messages", request)).text()
    expect(sse.indexOf("event: message_stop")).toBeLessThan(sse.indexOf("event: receipt-v2"))
    await expectGeminiReceipt(trailerOf(sse), request, "anthropic")
  })

  it("refuses an image by URL naming the Anthropic field", async () => {
    const res = await rawCall("messages", {
      model: GEMINI,
      max_tokens: 10,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }] }]
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.details.path).toBe("messages[0].content[0].source")
    expect(google.received).toHaveLength(0)
  })
})

describe("Gemini faults", () => {
  it("moves a call Gemini answers 5xx to the organisation's fallback, saying so in the receipt", async () => {
    await policy(["local-chat"])
    google.setBehaviour({ kind: "status", status: 503 })
    const { data, response } = await openai().chat.completions.create({ model: GEMINI, messages: [{ role: "user", content: "hi <PERSON_1>" }] }).withResponse()
    expect(data.choices[0].message.content).toBe("Echo: hi <PERSON_1>")
    expect(google.received).toHaveLength(1)
    expect(local.received).toHaveLength(1)
    const receipt = receiptOf(response.headers)
    expect(receipt).toMatchObject({ provider: "local", model: "local-chat", routing_decision: { from: "google", to: "local", strategy: "fallback" } })
    expect(receipt.hash_upstream_request).toBe(sha256(local.received[0].body))
  })

  it("reports Gemini's own error status (not its message) when it refuses a call and there is no fallback", async () => {
    google.setBehaviour({ kind: "status", status: 429 })
    const res = await rawCall("chat.completions", { model: GEMINI, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: "upstream_error", provider: "google", provider_status: 429, provider_error_type: "RESOURCE_EXHAUSTED" })
  })

  it("answers 502 for a 2xx that is not a Gemini response, billing nothing", async () => {
    google.setBehaviour({ kind: "status", status: 200, body: { unexpected: true } })
    const before = await balanceMicros(gw, orgId)
    const rowsBefore = (await usageRows()).length
    const res = await rawCall("chat.completions", { model: GEMINI, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: "upstream_error", provider: "google" })
    expect(google.received).toHaveLength(1)
    expect(await balanceMicros(gw, orgId)).toBe(before)
    expect(await usageRows()).toHaveLength(rowsBefore)
  })

  it("ends a stream Gemini cuts before its finish reason without [DONE] or a receipt, metered as partial", async () => {
    // Two good frames, then the connection is cut mid-answer (no finish reason): incomplete, so no trailer.
    google.setBehaviour({ kind: "cut-stream", afterChunks: 2 })
    const res = await rawCall("chat.completions", { model: GEMINI, stream: true, messages: [{ role: "user", content: "a b c d e f" }] })
    const sse = await res.text()
    expect(sse).toContain("Echo:")
    expect(sse).not.toContain("data: [DONE]")
    expect(sse).not.toContain("event: receipt-v2")
    const rows = await usageRows()
    expect(rows.at(-1)).toMatchObject({ provider: "google", partial: true })
  })

  it("gives up on a Gemini that sends no byte within its timeout: 504, nothing billed", async () => {
    google.setBehaviour({ kind: "hang" })
    const before = await balanceMicros(gw, orgId)
    const started = Date.now()
    const res = await rawCall("chat.completions", { model: GEMINI, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(504)
    expect((await res.json()).error.code).toBe("upstream_timeout")
    expect(Date.now() - started).toBeGreaterThanOrEqual(GOOGLE_TIMEOUT_MS - UPSTREAM_TIMER_SLACK_MS)
    expect(await balanceMicros(gw, orgId)).toBe(before)
  })
})
