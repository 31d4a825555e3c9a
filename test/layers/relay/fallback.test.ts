import { Effect } from "effect"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { setRoutingFallbacks } from "../../../layers/AdminOperations.ts"
import { type FakeProvider, startFakeProvider } from "../../../programs/fake-provider.ts"
import { attestedHeaders, attestingFetch } from "../../support/engine.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fetchJwks, independentlyVerify } from "../../support/receipts.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"
import { UPSTREAM_TIMER_SLACK_MS } from "../../support/upstreamTimerSlack.ts"

// Two fake providers: `anthropic` (Messages format) and `openai` (Chat Completions format), so each can fail on its
// own. The organisation's policy names the fallbacks; the requested model's provider is tried first.
let anthropicFake: FakeProvider
let openaiFake: FakeProvider
let gw: TestGateway
let apiKey: string
let orgId: string
const CLAUDE = "claude-haiku-4-5-20251001"
const GPT = "gpt-4o-mini"
const ANTHROPIC_TIMEOUT_MS = 700

beforeAll(async () => {
  anthropicFake = await startFakeProvider({ port: 0 })
  openaiFake = await startFakeProvider({ port: 0 })
  const dir = mkdtempSync(join(tmpdir(), "pr-fallback-"))
  writeFileSync(join(dir, "anthropic"), "pooled-anthropic-key", { mode: 0o600 })
  writeFileSync(join(dir, "openai"), "pooled-openai-key", { mode: 0o600 })
  gw = await startTestGateway({
    LOCAL_PROVIDER_URL: openaiFake.url,
    PROVIDER_ANTHROPIC_BASE_URL: anthropicFake.url,
    PROVIDER_ANTHROPIC_API_KEY_FILE: join(dir, "anthropic"),
    PROVIDER_ANTHROPIC_TIMEOUT_MS: String(ANTHROPIC_TIMEOUT_MS),
    PROVIDER_OPENAI_BASE_URL: openaiFake.url,
    PROVIDER_OPENAI_API_KEY_FILE: join(dir, "openai"),
    // Health-based reordering is covered by providerHealth.test.ts; here every call tries the policy's order.
    PROVIDER_COOLDOWN_MS: "0"
  })
  ;({ apiKey, orgId } = await fundedKey(gw))
})
afterAll(async () => {
  await gw.close()
  await anthropicFake.close()
  await openaiFake.close()
})
beforeEach(() => {
  anthropicFake.reset()
  openaiFake.reset()
})

const policy = (models: ReadonlyArray<string> | string) =>
  gw.runtime.runPromise(setRoutingFallbacks({ org_id: orgId, models }) as Effect.Effect<unknown, unknown, any>)
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const receiptOf = (res: Response | Headers) => {
  const headers = res instanceof Headers ? res : res.headers
  return JSON.parse(Buffer.from(headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))
}
const call = async (body: unknown, route: "chat.completions" | "messages" = "chat.completions") => {
  const text = JSON.stringify(body)
  return fetch(`${gw.url}/api/v1/${route === "messages" ? "messages" : "chat/completions"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders(route, text)) },
    body: text
  })
}
const usageRows = () => gw.query<{ provider: string; model: string; partial: boolean }>(
  "SELECT provider, model, partial FROM usage_records WHERE org_id = $1 ORDER BY finished_at DESC",
  orgId
)

describe("fallbacks before the first byte", () => {
  it("moves a call whose provider answers 5xx to the next model of the policy; the receipt and header say so", async () => {
    await policy([GPT])
    anthropicFake.setBehaviour({ kind: "status", status: 503 })
    const openai = new OpenAI({ apiKey, baseURL: `${gw.url}/api/v1`, fetch: attestingFetch("chat.completions"), maxRetries: 0 })
    const { data, response } = await openai.chat.completions.create({ model: CLAUDE, messages: [{ role: "user", content: "hi <PERSON_1>" }] }).withResponse()
    expect(data.choices[0].message.content).toBe("Echo: hi <PERSON_1>")
    expect(anthropicFake.received).toHaveLength(1)
    expect(openaiFake.received).toHaveLength(1)
    // Another model of the same format: only the body's model is replaced, sent as JCS bytes.
    const sent = JSON.parse(openaiFake.received[0].body.toString("utf8"))
    expect(sent).toEqual({ model: GPT, messages: [{ role: "user", content: "hi <PERSON_1>" }] })

    const decision = { from: "anthropic", to: "openai", chosen_model: GPT, classifier: "fallback-v1", savings_pct: 0, strategy: "fallback" }
    expect(JSON.parse(response.headers.get("x-service-routing-decision")!)).toEqual(decision)
    const receipt = receiptOf(response.headers)
    expect(receipt).toMatchObject({ provider: "openai", model: GPT, routing_decision: decision })
    expect(receipt.hash_upstream_request).toBe(sha256(openaiFake.received[0].body))
    expect(receipt.extensions.translation).toBeUndefined()
    expect(await independentlyVerify(receipt, await fetchJwks(gw.url))).toBe(true)
    // The body sent is not the attested one, so there is no countersignature of the attestation.
    expect(response.headers.get("x-service-receipt-v3")).toBeNull()
    expect((await usageRows())[0]).toMatchObject({ provider: "openai", model: GPT, partial: false })
  })

  it("falls back across formats on a 429: the fallback's body is translated and the countersignature names the translation", async () => {
    await policy([CLAUDE])
    openaiFake.setBehaviour({ kind: "status", status: 429 })
    const res = await call({ model: GPT, max_tokens: 32, messages: [{ role: "user", content: "hello" }] })
    expect(res.status).toBe(200)
    const answer = await res.json()
    expect(answer.object).toBe("chat.completion")
    expect(answer.choices[0].message.content).toBe("Echo: hello")
    expect(openaiFake.received).toHaveLength(1)
    expect(anthropicFake.received[0].path).toBe("/v1/messages")
    expect(JSON.parse(anthropicFake.received[0].body.toString("utf8"))).toMatchObject({ model: CLAUDE, max_tokens: 32 })
    const receipt = receiptOf(res)
    expect(receipt).toMatchObject({ provider: "anthropic", model: CLAUDE, routing_decision: { from: "openai", to: "anthropic", strategy: "fallback" } })
    expect(receipt.hash_upstream_request).toBe(sha256(anthropicFake.received[0].body))
    expect(receipt.extensions.translation).toMatchObject({ from: "openai", to: "anthropic" })
    const v3 = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-v3")!, "base64").toString("utf8"))
    expect(v3).toMatchObject({ provider: "anthropic", model: CLAUDE, translation: { from: "openai", to: "anthropic" }, hash_upstream_request: receipt.hash_upstream_request })
  })

  it("answers 502 listing every attempt when all fail, billing nothing and forwarding to each once", async () => {
    await policy([GPT, "local-chat"])
    anthropicFake.setBehaviour({ kind: "status", status: 500 })
    openaiFake.setBehaviour({ kind: "status", status: 503 })
    const before = await balanceMicros(gw, orgId)
    const rowsBefore = (await usageRows()).length
    const res = await call({ model: CLAUDE, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    const body = await res.json()
    expect(body.error).toMatchObject({
      code: "upstream_error",
      attempts: [
        { provider: "anthropic", model: CLAUDE, provider_status: 500, error: "upstream_error" },
        { provider: "openai", model: GPT, provider_status: 503, error: "upstream_error" },
        { provider: "local", model: "local-chat", provider_status: 503, error: "upstream_error" }
      ]
    })
    expect(anthropicFake.received).toHaveLength(1)
    expect(openaiFake.received).toHaveLength(2)
    expect(res.headers.get("x-service-receipt-failed")).not.toBeNull()
    expect(await balanceMicros(gw, orgId)).toBe(before)
    expect(await usageRows()).toHaveLength(rowsBefore)
  })

  it("does not fall back on a 4xx the request caused: the provider's refusal comes back as without a policy", async () => {
    await policy([GPT])
    anthropicFake.setBehaviour({ kind: "status", status: 400 })
    const res = await call({ model: CLAUDE, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: "upstream_error", provider: "anthropic", provider_status: 400 })
    expect(openaiFake.received).toHaveLength(0)
  })

  it("falls back when the provider sends nothing before its timeout", async () => {
    await policy([GPT])
    anthropicFake.setBehaviour({ kind: "hang" })
    const started = Date.now()
    const res = await call({ model: CLAUDE, messages: [{ role: "user", content: "slow" }] })
    expect(res.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(ANTHROPIC_TIMEOUT_MS - UPSTREAM_TIMER_SLACK_MS)
    expect((await res.json()).choices[0].message.content).toBe("Echo: slow")
    expect(receiptOf(res).routing_decision).toMatchObject({ from: "anthropic", to: "openai", strategy: "fallback" })
    await expect.poll(() => anthropicFake.openRequests()).toBe(0)
  })

  it("never retries once bytes reached the client: a stream stalling past the timeout ends cleanly, without a trailer", async () => {
    await policy([GPT])
    anthropicFake.setBehaviour({ kind: "stall-stream", afterChunks: 4 })
    const res = await call({ model: CLAUDE, stream: true, messages: [{ role: "user", content: "a b c d e f g" }] })
    expect(res.status).toBe(200)
    const sse = await res.text()
    expect(sse).toContain("chat.completion.chunk")
    expect(sse).not.toContain("[DONE]")
    expect(sse).not.toContain("receipt-v2")
    expect(openaiFake.received).toHaveLength(0)
    await expect.poll(async () => (await usageRows())[0]).toMatchObject({ provider: "anthropic", partial: true })
  })

  it("answers 502 for a 2xx body that is not JSON, billing nothing (no fallback: the provider did answer)", async () => {
    await policy([])
    openaiFake.setBehaviour({ kind: "status", status: 200, body: "<html>maintenance</html>" })
    const before = await balanceMicros(gw, orgId)
    const res = await call({ model: GPT, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatchObject({ code: "upstream_error", provider: "openai" })
    expect(await balanceMicros(gw, orgId)).toBe(before)
  })
})

describe("the fallback policy", () => {
  it("is set per organisation with validated catalogue models; an empty list removes it", async () => {
    // The operator command's own refusal (AdminInputInvalid), naming the field the admin API answers in details.path.
    await expect(policy(["no-such-model"])).rejects.toMatchObject({ _tag: "AdminInputInvalid", path: "models" })
    await expect(policy(["a", "b", "c", "d", "e"].map(() => GPT))).rejects.toMatchObject({ _tag: "AdminInputInvalid", path: "models" })
    expect(await policy(`${GPT}, openai/gpt-4o`)).toEqual({ org_id: orgId, fallbacks: [GPT, "openai/gpt-4o"] })
    expect(await policy("")).toEqual({ org_id: orgId, fallbacks: [] })
    anthropicFake.setBehaviour({ kind: "status", status: 503 })
    const res = await call({ model: CLAUDE, messages: [{ role: "user", content: "x" }] })
    expect(res.status).toBe(502)
    expect((await res.json()).error.attempts).toBeUndefined()
    expect(openaiFake.received).toHaveLength(0)
  })
})
