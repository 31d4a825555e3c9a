import Anthropic from "@anthropic-ai/sdk"
import canonicalize from "canonicalize"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createPortalToken, setRoutingFallbacks } from "../../layers/AdminOperations.ts"
import { fakeCompletionTokens, fakePromptTokens, type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { FAKE_BEDROCK_CREDENTIALS } from "../../programs/fakeBedrock.ts"
import { attestedHeaders, attestingFetch } from "../support/engine.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fetchJwks, independentlyVerify } from "../support/receipts.ts"
import { balanceMicros, fundedKey } from "../support/tenant.ts"
import { UPSTREAM_TIMER_SLACK_MS } from "../support/upstreamTimerSlack.ts"

// Amazon Bedrock through its native Converse API: the fake provider plays Bedrock Runtime (it checks every SigV4
// signature by signing again and streams real AWS event-stream frames); a second fake plays OpenAI for fallbacks.
// The clients are the official OpenAI and Anthropic SDKs, each seeing its own format only.
let bedrock: FakeProvider
let openaiFake: FakeProvider
let gw: TestGateway
let apiKey: string
let orgId: string
let portal: string
const NOVA = "amazon.nova-lite-v1:0"
const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0"
const GPT = "gpt-4o-mini"
const AWS = { ...FAKE_BEDROCK_CREDENTIALS[0]!, region: "us-east-1" }
const BEDROCK_TIMEOUT_MS = 700

beforeAll(async () => {
  bedrock = await startFakeProvider({ port: 0 })
  openaiFake = await startFakeProvider({ port: 0 })
  const dir = mkdtempSync(join(tmpdir(), "pr-bedrock-"))
  writeFileSync(join(dir, "openai"), "pooled-openai-key", { mode: 0o600 })
  gw = await startTestGateway({
    LOCAL_PROVIDER_URL: openaiFake.url,
    PROVIDER_AWS_BEDROCK_BASE_URL: bedrock.url,
    PROVIDER_AWS_BEDROCK_TIMEOUT_MS: String(BEDROCK_TIMEOUT_MS),
    PROVIDER_OPENAI_BASE_URL: openaiFake.url,
    PROVIDER_OPENAI_API_KEY_FILE: join(dir, "openai"),
    PROVIDER_COOLDOWN_MS: "0"
  })
  ;({ apiKey, orgId } = await fundedKey(gw))
  portal = (await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: ["ability:byok.write"] }))).token as string
  await storeAwsKeys(AWS)
})
afterAll(async () => {
  await gw.close()
  await bedrock.close()
  await openaiFake.close()
})
beforeEach(async () => {
  bedrock.reset()
  openaiFake.reset()
  await policy([])
})

const storeAwsKeys = async (aws: typeof AWS) => {
  const res = await fetch(`${gw.url}/api/v1/byok/aws-bedrock`, {
    method: "PUT",
    headers: { authorization: `Bearer ${portal}`, "content-type": "application/json" },
    body: JSON.stringify({ aws_access_key_id: aws.accessKeyId, aws_secret_access_key: aws.secretAccessKey, region: aws.region })
  })
  return { status: res.status, text: await res.text() }
}
const policy = (models: ReadonlyArray<string>) =>
  gw.runtime.runPromise(setRoutingFallbacks({ org_id: orgId, models }) as Effect.Effect<unknown, unknown, any>)
const openai = () => new OpenAI({ apiKey, baseURL: `${gw.url}/api/v1`, fetch: attestingFetch("chat.completions"), maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey, baseURL: `${gw.url}/api`, fetch: attestingFetch("messages"), maxRetries: 0 })
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")
const jcsSha256 = (value: unknown) => sha256(canonicalize(value)!)
const upstreamJson = (i = 0) => JSON.parse(bedrock.received[i]!.body.toString("utf8"))
const receiptOf = (headers: Headers) => JSON.parse(Buffer.from(headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))
const trailerOf = (sse: string) => JSON.parse(sse.slice(sse.indexOf("event: receipt-v2\ndata: ") + "event: receipt-v2\ndata: ".length).trim())
const usageRows = () =>
  gw.query<{ request_id: string; provider: string; model: string; key_mode: string; input_tokens: number; output_tokens: number; estimated: boolean; partial: boolean }>(
    "SELECT request_id, provider, model, key_mode, input_tokens, output_tokens, estimated, partial FROM usage_records WHERE org_id = $1 ORDER BY finished_at DESC",
    orgId
  )
const rawCall = async (route: "chat.completions" | "messages", body: unknown) => {
  const text = JSON.stringify(body)
  return fetch(`${gw.url}/api/v1/${route === "messages" ? "messages" : "chat/completions"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders(route, text)) },
    body: text
  })
}

/** Signed with the stored key pair for the region it names, over the headers that must not change in transit. */
const expectSigned = (i = 0) => {
  const headers = bedrock.received[i]!.headers
  expect(headers.authorization).toMatch(
    new RegExp(`^AWS4-HMAC-SHA256 Credential=${AWS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$`)
  )
  expect(headers["x-amz-content-sha256"]).toBe(sha256(bedrock.received[i]!.body))
  // The secret never travels, in any header or the body.
  expect(JSON.stringify(headers) + bedrock.received[i]!.body.toString()).not.toContain(AWS.secretAccessKey)
}

/** The receipt proves what went upstream: the Converse body's hash, and the format it was in. */
const expectConverseReceipt = async (receipt: any, clientBody: unknown, from: "openai" | "anthropic") => {
  expect(receipt.hash_upstream_request).toBe(sha256(bedrock.received[0]!.body))
  expect(receipt.hash_upstream_request).toBe(jcsSha256(upstreamJson()))
  expect(receipt.extensions.translation).toEqual({ from, to: "bedrock-converse", hash_client_request: jcsSha256(clientBody) })
  expect(await independentlyVerify(receipt, await fetchJwks(gw.url))).toBe(true)
}

describe("BYOK: an AWS key pair for Bedrock", () => {
  it("is stored encrypted and shown by its access key id's last 4; malformed parts are refused by name", async () => {
    const stored = await storeAwsKeys(AWS)
    expect(stored.status).toBe(200)
    expect(JSON.parse(stored.text)).toMatchObject({ provider: "aws-bedrock", last4: AWS.accessKeyId.slice(-4) })
    expect(stored.text).not.toContain(AWS.secretAccessKey)
    const rows = await gw.query<{ ciphertext: string }>("SELECT ciphertext FROM byok_credentials WHERE org_id = $1 AND provider = 'aws-bedrock'", orgId)
    expect(rows[0]!.ciphertext.startsWith("aead1.")).toBe(true)
    expect(rows[0]!.ciphertext).not.toContain(AWS.secretAccessKey)

    const bad = await storeAwsKeys({ ...AWS, region: "mars-1" })
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.text).error).toMatchObject({ code: "invalid_request", details: { path: "region" } })
    const lower = await storeAwsKeys({ ...AWS, accessKeyId: "akiafakebedrock00001" })
    expect(JSON.parse(lower.text).error).toMatchObject({ code: "invalid_request", details: { path: "aws_access_key_id" } })
  })
})

describe("an OpenAI client on a Bedrock model", () => {
  it("sends a signed Converse request (system, multi-part content) and gets a chat completion; the receipt names bedrock-converse", async () => {
    const request = {
      model: NOVA,
      max_tokens: 100,
      temperature: 0.2,
      messages: [
        { role: "system" as const, content: "Be brief about <PERSON_1>." },
        { role: "user" as const, content: [{ type: "text" as const, text: "Hello" }, { type: "text" as const, text: "<EMAIL_1>" }] }
      ]
    }
    const { data, response } = await openai().chat.completions.create(request).withResponse()
    expect(data.object).toBe("chat.completion")
    expect(data.choices[0]!.message).toMatchObject({ role: "assistant", content: "Echo: Hello\n<EMAIL_1>" })
    expect(data.choices[0]!.finish_reason).toBe("stop")
    expect(data.id).toMatch(/^msg_bdrk_fake-bedrock-\d+$/)

    expect(bedrock.received).toHaveLength(1)
    expect(bedrock.received[0]!.path).toBe("/model/amazon.nova-lite-v1%3A0/converse")
    expect(bedrock.received[0]!.headers.accept).toBe("application/json")
    expectSigned()
    expect(upstreamJson()).toEqual({
      system: [{ text: "Be brief about <PERSON_1>." }],
      messages: [{ role: "user", content: [{ text: "Hello" }, { text: "<EMAIL_1>" }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2 }
    })

    const promptTokens = fakePromptTokens(bedrock.received[0]!.body.length)
    const completionTokens = fakeCompletionTokens("Echo: Hello\n<EMAIL_1>")
    expect(data.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens })
    expect((await usageRows())[0]).toMatchObject({
      // Bedrock names its answer only by its request id (x-amzn-requestid): the usage record and the client keep it.
      request_id: data.id,
      provider: "aws-bedrock",
      model: NOVA,
      key_mode: "byok",
      input_tokens: promptTokens,
      output_tokens: completionTokens,
      estimated: false,
      partial: false
    })
    await expectConverseReceipt(receiptOf(response.headers), request, "openai")
  })

  it("streams through ConverseStream: event-stream frames arrive as chunks, then usage, [DONE] and the receipt trailer", async () => {
    const request = { model: NOVA, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "one two three" }] }
    const res = await rawCall("chat.completions", request)
    expect(res.status).toBe(200)
    const sse = await res.text()
    const frames = sse.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)))
    expect(frames.every((f) => f.object === "chat.completion.chunk")).toBe(true)
    expect(frames.map((f) => f.choices[0]?.delta?.content ?? "").join("")).toBe("Echo: one two three")
    expect(frames.at(-2).choices[0].finish_reason).toBe("stop")
    expect(sse.indexOf("data: [DONE]\n\n")).toBeLessThan(sse.indexOf("event: receipt-v2"))
    expect(bedrock.received[0]!.path).toBe("/model/amazon.nova-lite-v1%3A0/converse-stream")
    expect(bedrock.received[0]!.headers.accept).toBe("application/vnd.amazon.eventstream")
    expectSigned()

    const usage = frames.at(-1).usage
    expect(usage).toEqual({
      prompt_tokens: fakePromptTokens(bedrock.received[0]!.body.length),
      completion_tokens: fakeCompletionTokens("Echo: one two three"),
      total_tokens: fakePromptTokens(bedrock.received[0]!.body.length) + fakeCompletionTokens("Echo: one two three")
    })
    const receipt = trailerOf(sse)
    expect(receipt).toMatchObject({ provider: "aws-bedrock", model: NOVA, input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens })
    await expectConverseReceipt(receipt, request, "openai")
    expect((await usageRows())[0]).toMatchObject({ partial: false, estimated: false, output_tokens: usage.completion_tokens })
  })

  it("round-trips a tool call with the SDK, streamed: toolUse becomes tool_calls, the tool message a toolResult", async () => {
    const tool = { type: "function" as const, function: { name: "lookup", parameters: { type: "object", properties: { text: { type: "string" } } } } }
    const stream = await openai().chat.completions.create({ model: NOVA, stream: true, tools: [tool], messages: [{ role: "user", content: "find <PERSON_3>" }] })
    let args = ""
    let id: string | undefined
    let finish: string | null = null
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) {
        id ??= call.id
        args += call.function?.arguments ?? ""
      }
      finish = chunk.choices[0]?.finish_reason ?? finish
    }
    expect(finish).toBe("tool_calls")
    expect(JSON.parse(args)).toEqual({ text: "find <PERSON_3>" })
    expect(upstreamJson().toolConfig).toEqual({ tools: [{ toolSpec: { name: "lookup", inputSchema: { json: tool.function.parameters } } }] })

    bedrock.reset()
    const second = await openai().chat.completions.create({
      model: NOVA,
      tools: [tool],
      messages: [
        { role: "user", content: "find <PERSON_3>" },
        { role: "assistant", content: null, tool_calls: [{ id: id!, type: "function", function: { name: "lookup", arguments: args } }] },
        { role: "tool", tool_call_id: id!, content: "found <PHONE_1>" }
      ]
    })
    expect(second.choices[0]!.message.content).toBe("Echo: found <PHONE_1>")
    expect(upstreamJson().messages).toEqual([
      { role: "user", content: [{ text: "find <PERSON_3>" }] },
      { role: "assistant", content: [{ toolUse: { toolUseId: id, name: "lookup", input: { text: "find <PERSON_3>" } } }] },
      { role: "user", content: [{ toolResult: { toolUseId: id, content: [{ text: "found <PHONE_1>" }] } }] }
    ])
  })

  it("refuses what Converse cannot take with 400 naming the field; nothing forwarded, nothing billed", async () => {
    const before = await balanceMicros(gw, orgId)
    const err = await openai().chat.completions.create({
      model: NOVA,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }]
    }).catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.error).toMatchObject({ code: "invalid_request", details: { path: "messages[0].content[0].image_url.url" } })
    expect(bedrock.received).toHaveLength(0)
    expect(await balanceMicros(gw, orgId)).toBe(before)
  })
})

describe("an Anthropic client on a Bedrock model", () => {
  it("gets a message with tool_use, then answers the tool_result; stop reasons and usage in Anthropic's shape", async () => {
    const tools = [{ name: "lookup", description: "Look up", input_schema: { type: "object" as const, properties: { text: { type: "string" } } } }]
    const first = await anthropic().messages.create({ model: CLAUDE, max_tokens: 200, system: "S <PERSON_2>", tools, messages: [{ role: "user", content: "where is <PERSON_2>" }] })
    expect(first.stop_reason).toBe("tool_use")
    const use = first.content[0] as Anthropic.ToolUseBlock
    expect(use).toMatchObject({ type: "tool_use", name: "lookup", input: { text: "where is <PERSON_2>" } })
    expect(first.usage).toMatchObject({ input_tokens: fakePromptTokens(bedrock.received[0]!.body.length) })
    expect(bedrock.received[0]!.path).toBe("/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse")
    expectSigned()
    expect(upstreamJson()).toEqual({
      system: [{ text: "S <PERSON_2>" }],
      messages: [{ role: "user", content: [{ text: "where is <PERSON_2>" }] }],
      inferenceConfig: { maxTokens: 200 },
      toolConfig: { tools: [{ toolSpec: { name: "lookup", description: "Look up", inputSchema: { json: tools[0]!.input_schema } } }] }
    })

    bedrock.reset()
    const request = {
      model: CLAUDE,
      max_tokens: 200,
      tools,
      messages: [
        { role: "user" as const, content: "where is <PERSON_2>" },
        { role: "assistant" as const, content: first.content },
        { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: use.id, content: "at <LOCATION_1>", is_error: true }] }
      ]
    }
    const { data, response } = await anthropic().messages.create(request).withResponse()
    expect(data).toMatchObject({ type: "message", role: "assistant", stop_reason: "end_turn", content: [{ type: "text", text: "Echo: at <LOCATION_1>" }] })
    expect(upstreamJson().messages[2]).toEqual({ role: "user", content: [{ toolResult: { toolUseId: use.id, content: [{ text: "at <LOCATION_1>" }], status: "error" } }] })
    await expectConverseReceipt(receiptOf(response.headers), request, "anthropic")
  })

  it("streams with the SDK: Anthropic events built from ConverseStream frames, final usage from Bedrock's metadata event", async () => {
    const stream = anthropic().messages.stream({ model: CLAUDE, max_tokens: 50, messages: [{ role: "user", content: "a b <NAME_1>" }] })
    let text = ""
    stream.on("text", (t) => {
      text += t
    })
    const final = await stream.finalMessage()
    expect(text).toBe("Echo: a b <NAME_1>")
    expect(final.stop_reason).toBe("end_turn")
    expect(final.usage).toMatchObject({
      input_tokens: fakePromptTokens(bedrock.received[0]!.body.length),
      output_tokens: fakeCompletionTokens("Echo: a b <NAME_1>")
    })
    expect(bedrock.received[0]!.path).toBe("/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream")
    expectSigned()
  })
})

describe("signing is real", () => {
  it("a key pair whose secret is wrong is refused by Bedrock (403 InvalidSignatureException): 502 to the client, nothing billed", async () => {
    await storeAwsKeys({ ...AWS, secretAccessKey: `${AWS.secretAccessKey.slice(0, -1)}X` })
    try {
      const before = await balanceMicros(gw, orgId)
      const res = await rawCall("chat.completions", { model: NOVA, messages: [{ role: "user", content: "hi" }] })
      expect(res.status).toBe(502)
      expect((await res.json()).error).toMatchObject({
        code: "upstream_error",
        provider: "aws-bedrock",
        provider_status: 403,
        provider_error_type: "InvalidSignatureException"
      })
      expect(bedrock.received).toHaveLength(1)
      expect(await balanceMicros(gw, orgId)).toBe(before)
    } finally {
      await storeAwsKeys(AWS)
    }
  })
})

describe("faults", () => {
  it("Bedrock throttling (429), then 503: the organisation's fallback answers; receipt and header name the fallback", async () => {
    await policy([GPT])
    for (const status of [429, 503]) {
      bedrock.reset()
      openaiFake.reset()
      bedrock.setBehaviour({ kind: "status", status })
      const { data, response } = await openai().chat.completions.create({ model: NOVA, messages: [{ role: "user", content: "hello" }] }).withResponse()
      expect(data.choices[0]!.message.content).toBe("Echo: hello")
      expect(bedrock.received).toHaveLength(1)
      expect(openaiFake.received).toHaveLength(1)
      expect(JSON.parse(response.headers.get("x-service-routing-decision")!)).toMatchObject({ strategy: "fallback", from: "aws-bedrock", to: "openai", chosen_model: GPT })
      expect(receiptOf(response.headers)).toMatchObject({ provider: "openai", model: GPT })
    }
  })

  it("a malformed event-stream frame mid-stream: the stream ends cleanly without a trailer, billed only for what was delivered", async () => {
    bedrock.setBehaviour({ kind: "bad-frame", afterChunks: 3 })
    const before = await balanceMicros(gw, orgId)
    const res = await rawCall("messages", { model: CLAUDE, max_tokens: 50, stream: true, messages: [{ role: "user", content: "alpha beta gamma delta" }] })
    expect(res.status).toBe(200)
    const sse = await res.text()
    expect(sse).not.toContain("event: receipt-v2")
    expect(sse).not.toContain("message_stop")
    // Frames before the bad one (messageStart and two text deltas: "Echo: " and "alpha ") reached the client; nothing after it.
    const delivered = sse.split("\n\n").filter((f) => f.includes("text_delta")).map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)).delta.text).join("")
    expect(delivered).toBe("Echo: alpha ")
    // Output is estimated from the text the client got (4 characters a token), not from the event-stream bytes.
    await expect.poll(async () => (await usageRows())[0]).toMatchObject({
      provider: "aws-bedrock",
      partial: true,
      estimated: true,
      output_tokens: Math.ceil(delivered.length / 4)
    })
    expect(await balanceMicros(gw, orgId)).toBeLessThan(before)
  })

  it("a timeout before the first byte: 504 upstream_timeout after PROVIDER_AWS_BEDROCK_TIMEOUT_MS, nothing billed; with a fallback, the fallback answers", async () => {
    bedrock.setBehaviour({ kind: "hang" })
    const before = await balanceMicros(gw, orgId)
    const started = Date.now()
    const res = await rawCall("chat.completions", { model: NOVA, stream: true, messages: [{ role: "user", content: "hi" }] })
    expect(res.status).toBe(504)
    expect((await res.json()).error.code).toBe("upstream_timeout")
    expect(Date.now() - started).toBeGreaterThanOrEqual(BEDROCK_TIMEOUT_MS - UPSTREAM_TIMER_SLACK_MS)
    expect(await balanceMicros(gw, orgId)).toBe(before)

    await policy([GPT])
    const answered = await openai().chat.completions.create({ model: NOVA, messages: [{ role: "user", content: "again" }] })
    expect(answered.choices[0]!.message.content).toBe("Echo: again")
    expect(openaiFake.received).toHaveLength(1)
  })
})
