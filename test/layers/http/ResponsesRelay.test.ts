import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fakeCompletionTokens, fakePromptTokens, fakeReplyText } from "../../../programs/fake-provider.ts"
import { verifyReceipt } from "../../../sdks/typescript/src/verify/receipt.ts"
import type { AttestationRoute } from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

/**
 * POST /api/v1/responses (OpenAI's Responses API) and POST /api/v1/messages/count_tokens (Anthropic's token counting)
 * on a real gateway relaying to the fake provider (issue 34, docs/relay.md).
 */
const keyDir = mkdtempSync(join(tmpdir(), "responses-relay-"))
const mistralKeyFile = join(keyDir, "mistral")
writeFileSync(mistralKeyFile, "fake-mistral-key\n", { mode: 0o600 })

// Mistral (OpenAI format, no token counting endpoint) served by the fake too: the estimated count's provider.
const fx = useRelayFixture({ PROVIDER_LOCAL_TIMEOUT_MS: "2000", PROVIDER_MISTRAL_API_KEY_FILE: mistralKeyFile }, { streamPieceChars: 6 })

const responsesBody = (input: unknown = "Hello <EMAIL_1>", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", input, ...extra })

const post = async (path: string, route: AttestationRoute, apiKey: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${fx.gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders(route, body)), ...headers },
    body
  })

const relayResponses = (apiKey: string, body = responsesBody(), headers: Record<string, string> = {}) =>
  post("/api/v1/responses", "responses", apiKey, body, headers)

const countTokens = (apiKey: string, body: string, headers: Record<string, string> = {}) =>
  post("/api/v1/messages/count_tokens", "messages.count_tokens", apiKey, body, headers)

const jwks = async () => (await fetch(`${fx.gw.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()

const events = (text: string) =>
  text.split("\n\n").filter(Boolean).map((frame) => ({
    event: /^event: (.*)$/m.exec(frame)?.[1],
    data: /^data: (.*)$/m.exec(frame)?.[1] ?? ""
  }))

const until = async (cond: () => Promise<boolean> | boolean, ms = 3000) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await cond()) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return false
}

const usageOf = (orgId: string) =>
  fx.gw.query<{ capability: string; request_id: string; input_tokens: number; output_tokens: number; estimated: boolean; partial: boolean; receipt_jti: string | null; billed_micros: string }>(
    "SELECT capability, request_id, input_tokens, output_tokens, estimated, partial, receipt_jti, billed_micros::text AS billed_micros FROM usage_records WHERE org_id = $1",
    orgId
  )

describe("POST /api/v1/responses (JSON)", () => {
  it("relays the body byte for byte, answers the Response, meters it from its usage, debits it and seals v2, v1 and v3 receipts", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = `{ "model":"local-chat", "instructions": "be  brief",\n "input": [ {"role":"user","content":[{"type":"input_text","text":"  spaced <EMAIL_1> "}]} ] }`
    const before = await balanceMicros(fx.gw, orgId)
    const res = await relayResponses(apiKey, body, { "x-request-id": "9b2f6f5e-1c1d-4c1b-9a5e-0d8f1f1f2a3b" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-request-id")).toBe("9b2f6f5e-1c1d-4c1b-9a5e-0d8f1f1f2a3b")
    const json = await res.json()
    expect(json).toMatchObject({ object: "response", status: "completed", instructions: "be  brief" })
    expect(json.output[0].content[0].text).toBe(fakeReplyText("  spaced <EMAIL_1> "))

    expect(fx.provider.received).toHaveLength(1)
    const upstream = fx.provider.received[0]!
    expect(upstream.path).toBe("/v1/responses")
    expect(upstream.body.equals(Buffer.from(body))).toBe(true)
    expect(upstream.headers["x-request-id"]).toBe("9b2f6f5e-1c1d-4c1b-9a5e-0d8f1f1f2a3b")
    expect(JSON.stringify(upstream.headers)).not.toContain(apiKey)

    const usage = await usageOf(orgId)
    expect(usage).toHaveLength(1)
    expect(usage[0]).toMatchObject({ capability: "responses", request_id: json.id, input_tokens: json.usage.input_tokens, output_tokens: json.usage.output_tokens, estimated: false, partial: false })
    expect(await balanceMicros(fx.gw, orgId)).toBe(before - BigInt(usage[0]!.billed_micros))

    const v2Header = res.headers.get("x-service-receipt-v2")!
    const v2 = JSON.parse(Buffer.from(v2Header, "base64").toString())
    expect(v2).toMatchObject({ v: 2, request_id: json.id, provider: "local", model: "local-chat", input_tokens: json.usage.input_tokens })
    expect(v2.hash_upstream_request).toBe(createHash("sha256").update(canonicalize(JSON.parse(body))!).digest("hex"))
    expect(usage[0]!.receipt_jti).toBe(v2.jti)
    expect((await verifyReceipt(v2Header, { jwks: await jwks() })).valid).toBe(true)
    const v1 = await fx.gw.query<{ capability: string }>("SELECT capability FROM receipts_v1 WHERE jti = $1", v2.jti)
    expect(v1).toEqual([{ capability: "responses" }])
    const v3 = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-v3")!, "base64").toString())
    expect(v3).toMatchObject({ v: "v3-countersignature", provider: "local", model: "local-chat", receipt_jti: v2.jti })
  })

  it("continues the caller's trace: traceparent upstream and on the response carry the same trace id", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const res = await relayResponses(apiKey, responsesBody(), { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
    expect(res.status).toBe(200)
    expect(res.headers.get("traceparent")).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(String(fx.provider.received[0]!.headers["traceparent"])).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
  })

  it("an Idempotency-Key replays the stored Response: one provider call, one debit, the same receipt", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const key = crypto.randomUUID()
    const first = await relayResponses(apiKey, responsesBody(), { "idempotency-key": key })
    const again = await relayResponses(apiKey, responsesBody(), { "idempotency-key": key })
    expect(again.status).toBe(200)
    expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(await again.text()).toBe(await first.text())
    expect(again.headers.get("x-service-receipt-v2-jti")).toBe(first.headers.get("x-service-receipt-v2-jti"))
    expect(fx.provider.received).toHaveLength(1)
    expect(await usageOf(orgId)).toHaveLength(1)
  })

  it("an attestation of another route (chat.completions) is refused with 428 and nothing is forwarded", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const body = responsesBody()
    const res = await fetch(`${fx.gw.url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(res.status).toBe(428)
    expect((await res.json()).error.code).toBe("pretokenised_required")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("needs the completions scope", async () => {
    const { apiKey, keyPrefix } = await fundedKey(fx.gw)
    await fx.gw.query(`UPDATE api_keys SET permissions = '["messages"]'::jsonb WHERE key_prefix = $1`, keyPrefix)
    const res = await relayResponses(apiKey)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ error: { code: "insufficient_scope", required: ["completions"] } })
  })
})

describe("POST /api/v1/responses (streamed)", () => {
  const streamBody = (input = "alpha beta <EMAIL_1> gamma", extra: Record<string, unknown> = {}) => responsesBody(input, { stream: true, ...extra })

  it("relays the named events unchanged and appends the receipt-v2 frame after response.completed; usage read from response.completed", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const res = await relayResponses(apiKey, streamBody())
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
    expect(res.headers.get("cache-control")).toBe("no-cache, no-store, must-revalidate")
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const text = await res.text()
    expect(text).not.toContain("[DONE]")
    const all = events(text)
    expect(all[0]!.event).toBe("response.created")
    expect(all.at(-2)!.event).toBe("response.completed")
    expect(all.at(-1)!.event).toBe("receipt-v2")
    // Everything before the trailer is the provider's bytes: the frames reassemble the reply.
    const deltas = all.filter((e) => e.event === "response.output_text.delta").map((e) => JSON.parse(e.data).delta).join("")
    expect(deltas).toBe(fakeReplyText("alpha beta <EMAIL_1> gamma"))
    const receipt = JSON.parse(all.at(-1)!.data)
    const completed = JSON.parse(all.at(-2)!.data).response
    expect(receipt).toMatchObject({ v: 2, request_id: completed.id, output_tokens: completed.usage.output_tokens })
    expect((await verifyReceipt(receipt, { jwks: await jwks() })).valid).toBe(true)
    expect(await usageOf(orgId)).toEqual([
      expect.objectContaining({
        capability: "responses",
        request_id: completed.id,
        input_tokens: completed.usage.input_tokens,
        output_tokens: fakeCompletionTokens(fakeReplyText("alpha beta <EMAIL_1> gamma")),
        estimated: false,
        partial: false,
        receipt_jti: receipt.jti
      })
    ])
    expect(completed.usage.input_tokens).toBe(fakePromptTokens(Buffer.byteLength(streamBody())))
  })

  it("replays the recorded transcript byte for byte, trailer included, with X-Service-Streamed: one provider call, one debit", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const key = crypto.randomUUID()
    const original = Buffer.from(await (await relayResponses(apiKey, streamBody(), { "idempotency-key": key })).arrayBuffer())
    expect(original.toString()).toContain("event: receipt-v2")
    const replayed = await relayResponses(apiKey, streamBody(), { "idempotency-key": key })
    expect(replayed.status).toBe(200)
    expect(replayed.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
    expect(replayed.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(replayed.headers.get("x-service-streamed")).toBe("true")
    expect(Buffer.from(await replayed.arrayBuffer()).equals(original)).toBe(true)
    expect(fx.provider.received).toHaveLength(1)
    expect(await usageOf(orgId)).toHaveLength(1)
  })

  it("relays an event type it does not know, in place, never dropping it", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const text = await (await relayResponses(apiKey, streamBody("hi", { metadata: { fake_unknown_event: "response.novel_thing" } }))).text()
    const names = events(text).map((e) => e.event)
    expect(names.slice(-3)).toEqual(["response.novel_thing", "response.completed", "receipt-v2"])
  })

  it("a stream cut before response.completed ends without a trailer and is metered as partial", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    fx.provider.setBehaviour({ kind: "cut-stream", afterChunks: 5 })
    const res = await relayResponses(apiKey, streamBody())
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain("response.completed")
    expect(text).not.toContain("receipt-v2")
    expect(await until(async () => (await usageOf(orgId)).length === 1)).toBe(true)
    expect(await usageOf(orgId)).toEqual([expect.objectContaining({ partial: true, receipt_jti: null })])
    expect(await fx.gw.query("SELECT 1 FROM wallet_holds WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("a stream that ends cleanly without response.completed is incomplete too: no trailer, partial", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    fx.provider.setBehaviour({ kind: "status", status: 200, body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_x\",\"usage\":null}}\n\n" })
    const res = await relayResponses(apiKey, streamBody())
    const text = await res.text()
    expect(text).toContain("response.created")
    expect(text).not.toContain("receipt-v2")
    expect(await until(async () => (await usageOf(orgId)).length === 1)).toBe(true)
    expect(await usageOf(orgId)).toEqual([expect.objectContaining({ partial: true, receipt_jti: null })])
  })
})

describe("POST /api/v1/responses: bad input (stable codes, nothing forwarded)", () => {
  const refused = async (body: string, status: number, code: string, path?: string) => {
    const { apiKey } = await fundedKey(fx.gw)
    const res = await relayResponses(apiKey, body)
    expect(res.status).toBe(status)
    const json = await res.json()
    expect(json.error.code).toBe(code)
    if (path !== undefined) expect(json.error.details.path).toBe(path)
    expect(res.headers.get("x-service-receipt-failed")).not.toBeNull()
    expect(fx.provider.received).toHaveLength(0)
    return json
  }

  it("a hosted tool (web search, file search, computer use) on a provider that does not run them: 400 tool_not_supported", async () => {
    for (const type of ["web_search", "file_search", "computer_use_preview"]) {
      const json = await refused(responsesBody("find it", { tools: [{ type: "function", name: "f" }, { type }] }), 400, "tool_not_supported", "tools[1].type")
      expect(json.error.message).toContain(type)
      expect(json.error.message).toContain('"local"')
    }
    // A hosted tool's call item in the input is refused by the egress policy itself (the clients refuse it before it
    // leaves; the gateway, for a raw REST caller that did not declare it, answers egress_policy_violation).
    await refused(responsesBody([{ type: "web_search_call", id: "ws_1", status: "completed" }, { role: "user", content: "and?" }]), 400, "egress_policy_violation", "/input/0")
  })

  it("malformed items: 400 invalid_request naming the field", async () => {
    await refused(JSON.stringify({ model: "local-chat" }), 400, "invalid_request", "input")
    await refused(responsesBody([]), 400, "invalid_request", "input")
    await refused(responsesBody(["text"]), 400, "invalid_request", "input[0]")
    await refused(responsesBody([{ role: "robot", content: "x" }]), 400, "invalid_request", "input[0].role")
    await refused(responsesBody([{ role: "user", content: 7 }]), 400, "invalid_request", "input[0].content")
    await refused(responsesBody([{ role: "user", content: [{ text: "no type" }] }]), 400, "invalid_request", "input[0].content[0]")
    await refused(responsesBody([{ type: "function_call", call_id: "c", name: "f" }]), 400, "invalid_request", "input[0].arguments")
    await refused(responsesBody([{ type: "function_call_output", output: "x" }]), 400, "invalid_request", "input[0].call_id")
    await refused(responsesBody("x", { tools: [{ type: "function" }] }), 400, "invalid_request", "tools[0].name")
    await refused(responsesBody("x", { max_output_tokens: 0 }), 400, "invalid_request", "max_output_tokens")
    await refused(responsesBody("x", { instructions: ["a"] }), 400, "invalid_request", "instructions")
  })

  it("an input item type the gateway does not know: 400 invalid_request at its type", async () => {
    const json = await refused(responsesBody([{ type: "telepathy", content: "x" }]), 400, "invalid_request", "input[0].type")
    expect(json.error.message).toContain("telepathy")
  })
})

describe("POST /api/v1/messages/count_tokens", () => {
  const countBody = (model = "local-chat") => JSON.stringify({ model, system: "be brief", messages: [{ role: "user", content: "count <EMAIL_1>" }] })

  it("counts at the provider (Anthropic's count_tokens, body relayed unchanged): not billed, not metered, no receipt", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const before = await balanceMicros(fx.gw, orgId)
    const body = countBody()
    const res = await countTokens(apiKey, body, { "anthropic-beta": "token-counting-2024-11-01" })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ input_tokens: fakePromptTokens(Buffer.byteLength(body)) })
    expect(res.headers.get("x-service-token-count")).toBe("provider")
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    for (const name of ["x-service-receipt-v2", "x-service-receipt-v2-jti", "x-service-receipt-v3", "x-service-receipt-failed"]) {
      expect(res.headers.get(name)).toBeNull()
    }
    expect(fx.provider.received).toHaveLength(1)
    expect(fx.provider.received[0]!.path).toBe("/v1/messages/count_tokens")
    expect(fx.provider.received[0]!.body.equals(Buffer.from(body))).toBe(true)
    expect(fx.provider.received[0]!.headers["anthropic-beta"]).toBe("token-counting-2024-11-01")
    expect(fx.provider.received[0]!.headers["x-api-key"]).toBe("local")
    expect(await usageOf(orgId)).toHaveLength(0)
    expect(await balanceMicros(fx.gw, orgId)).toBe(before)
    expect(await fx.gw.query("SELECT 1 FROM wallet_holds WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("estimates for a provider without token counting (ceil(bytes / 4)), with nothing sent upstream", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const body = countBody("mistral-small-latest")
    const res = await countTokens(apiKey, body)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ input_tokens: Math.ceil(Buffer.byteLength(body) / 4) })
    expect(res.headers.get("x-service-token-count")).toBe("estimated")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("needs the messages scope and an attestation of route messages.count_tokens; refusals carry no receipt", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const body = countBody()
    const wrongRoute = await fetch(`${fx.gw.url}/api/v1/messages/count_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, ...(await attestedHeaders("messages", body)) },
      body
    })
    expect(wrongRoute.status).toBe(428)
    expect(wrongRoute.headers.get("x-service-receipt-failed")).toBeNull()
    const noMessages = await countTokens(apiKey, JSON.stringify({ model: "local-chat" }))
    expect(noMessages.status).toBe(400)
    expect((await noMessages.json()).error.details.path).toBe("messages")
    // A key scoped before its first use: a key already used is cached (in Redis on PostgreSQL+Redis) with its old scopes.
    const other = await fundedKey(fx.gw)
    await fx.gw.query(`UPDATE api_keys SET permissions = '["completions"]'::jsonb WHERE key_prefix = $1`, other.keyPrefix)
    const scoped = await countTokens(other.apiKey, body)
    expect(scoped.status).toBe(403)
    expect((await scoped.json()).error.code).toBe("insufficient_scope")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("a provider error is 502 upstream_error", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    fx.provider.setBehaviour({ kind: "status", status: 500 })
    const res = await countTokens(apiKey, countBody())
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: "upstream_error", provider: "local", provider_status: 500 })
  })
})
