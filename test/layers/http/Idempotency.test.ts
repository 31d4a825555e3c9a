import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../../programs/fake-provider.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { startTestGateway, startTestGatewayPair, type TestGateway } from "../../support/gateway.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

let provider: FakeProvider
let gw: TestGateway
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0, chunkDelayMs: 5 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
})
afterAll(async () => {
  await gw.close()
  await provider.close()
})
beforeEach(() => provider.reset())

const chatBody = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", messages: [{ role: "user", content }], ...extra })

const relay = async (target: TestGateway, apiKey: string, body: string, idempotencyKey?: string) =>
  fetch(`${target.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${apiKey}`,
      "content-type": "application/json",
      ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      ...(await attestedHeaders("chat.completions", body))
    },
    body
  })

const debits = (g: TestGateway, orgId: string) =>
  g.query("SELECT 1 FROM ledger_entries WHERE org_id = $1 AND kind = 'debit'", orgId).then((r) => r.length)

describe("Idempotency-Key on the relay routes", () => {
  it("replays the stored 2xx response for the same key and body: no upstream call, no new debit, same receipt", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = chatBody("first <EMAIL_1>")
    const first = await relay(gw, apiKey, body, key)
    expect(first.status).toBe(200)
    const firstBody = await first.text()
    const balance = await balanceMicros(gw, orgId)

    // the same body re-serialised with other key order and spacing is the same request
    const reordered = JSON.stringify({ messages: [{ content: "first <EMAIL_1>", role: "user" }], model: "local-chat" }, null, 2)
    const again = await relay(gw, apiKey, reordered, key)
    expect(again.status).toBe(200)
    expect(await again.text()).toBe(firstBody)
    expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    expect(again.headers.get("x-service-receipt-v2-jti")).toBe(first.headers.get("x-service-receipt-v2-jti"))
    expect(again.headers.get("x-service-receipt-v2")).toBe(first.headers.get("x-service-receipt-v2"))
    expect(provider.received).toHaveLength(1)
    expect(await balanceMicros(gw, orgId)).toBe(balance)
    expect(await debits(gw, orgId)).toBe(1)
  })

  it("answers 409 idempotency_key_conflict for the same key with a different body, forwarding nothing", async () => {
    const { apiKey } = await fundedKey(gw)
    const key = crypto.randomUUID()
    expect((await relay(gw, apiKey, chatBody("one"), key)).status).toBe(200)
    const res = await relay(gw, apiKey, chatBody("two"), key)
    expect(res.status).toBe(409)
    expect((await res.json()).error.code).toBe("idempotency_key_conflict")
    expect(provider.received).toHaveLength(1)
  })

  it("answers 400 invalid_idempotency_key for a key over 128 characters", async () => {
    const { apiKey } = await fundedKey(gw)
    const res = await relay(gw, apiKey, chatBody("x"), "k".repeat(129))
    expect(res.status).toBe(400)
    expect((await res.json()).error.code).toBe("invalid_idempotency_key")
    expect(provider.received).toHaveLength(0)
    expect((await relay(gw, apiKey, chatBody("x"), "k".repeat(128))).status).toBe(200)
  })

  it("never stores a non-2xx response: a retry after an error is processed afresh", async () => {
    const { apiKey, orgId } = await fundedKey(gw, "0")
    const key = crypto.randomUUID()
    const body = chatBody("retry me")
    expect((await relay(gw, apiKey, body, key)).status).toBe(402)
    await gw.query("UPDATE wallets SET balance_micros = 5000000 WHERE org_id = $1", orgId)
    await gw.query("INSERT INTO ledger_entries (org_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 5000000, 'test')", orgId)
    const retry = await relay(gw, apiKey, body, key)
    expect(retry.status).toBe(200)
    expect(retry.headers.get("x-service-idempotent-replay")).toBeNull()
    expect(provider.received).toHaveLength(1)
  })

  it("makes a duplicate that arrives in flight wait for the original and get its response (one upstream call)", async () => {
    const { apiKey } = await fundedKey(gw)
    provider.setBehaviour({ kind: "delay", ms: 800 })
    const key = crypto.randomUUID()
    const body = chatBody("slow")
    const original = relay(gw, apiKey, body, key)
    await new Promise((r) => setTimeout(r, 200))
    const duplicate = await relay(gw, apiKey, body, key)
    const first = await original
    expect(first.status).toBe(200)
    expect(duplicate.status).toBe(200)
    expect(await duplicate.text()).toBe(await first.text())
    expect(duplicate.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(provider.received).toHaveLength(1)
  })

  it("answers 409 idempotency_in_flight with Retry-After when the original is still running after 3 s", async () => {
    const { apiKey } = await fundedKey(gw)
    provider.setBehaviour({ kind: "delay", ms: 4500 })
    const key = crypto.randomUUID()
    const body = chatBody("very slow")
    const original = relay(gw, apiKey, body, key)
    await new Promise((r) => setTimeout(r, 200))
    const started = Date.now()
    const duplicate = await relay(gw, apiKey, body, key)
    const waited = Date.now() - started
    expect(duplicate.status).toBe(409)
    expect((await duplicate.json()).error.code).toBe("idempotency_in_flight")
    expect(duplicate.headers.get("retry-after")).toBe("1")
    expect(waited).toBeGreaterThanOrEqual(2900)
    expect((await original).status).toBe(200)
    expect(provider.received).toHaveLength(1)
  }, 20_000)
})

describe("Idempotency-Key on streamed relay calls", () => {
  const streamBody = (content: string) => chatBody(content, { stream: true, stream_options: { include_usage: true } })

  it("replays the recorded transcript byte for byte, trailer included, with X-Service-Streamed", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = streamBody("stream once")
    const first = await relay(gw, apiKey, body, key)
    const original = new Uint8Array(await first.arrayBuffer())
    expect(new TextDecoder().decode(original)).toContain("data: [DONE]\n\n")
    const replayed = await relay(gw, apiKey, body, key)
    expect(replayed.status).toBe(200)
    expect(replayed.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
    expect(replayed.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(replayed.headers.get("x-service-streamed")).toBe("true")
    expect(Buffer.from(await replayed.arrayBuffer()).equals(Buffer.from(original))).toBe(true)
    expect(provider.received).toHaveLength(1)
    expect(await debits(gw, orgId)).toBe(1)
  })

  it("does not store a stream that failed midway: the retry runs afresh", async () => {
    const { apiKey } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = streamBody("cut me off")
    provider.setBehaviour({ kind: "cut-stream", afterChunks: 2 })
    const cut = await relay(gw, apiKey, body, key)
    expect(await cut.text()).not.toContain("[DONE]")
    provider.setBehaviour({ kind: "normal" })
    const retry = await relay(gw, apiKey, body, key)
    expect(retry.headers.get("x-service-idempotent-replay")).toBeNull()
    expect(await retry.text()).toContain("data: [DONE]")
    expect(provider.received).toHaveLength(2)
  })
})

describe("Idempotency-Key across two gateway nodes", () => {
  it("a duplicate sent to the other node while the first is in flight gets the same response; one upstream call", async () => {
    const [a, b] = await startTestGatewayPair({ LOCAL_PROVIDER_URL: provider.url })
    try {
      const { apiKey } = await fundedKey(a)
      provider.setBehaviour({ kind: "delay", ms: 800 })
      const key = crypto.randomUUID()
      const body = chatBody("two nodes")
      const original = relay(a, apiKey, body, key)
      await new Promise((r) => setTimeout(r, 250))
      const duplicate = await relay(b, apiKey, body, key)
      const first = await original
      expect(first.status).toBe(200)
      expect(duplicate.status).toBe(200)
      expect(await duplicate.text()).toBe(await first.text())
      expect(provider.received).toHaveLength(1)
    } finally {
      await a.close()
      await b.close()
    }
  }, 60_000)
})
