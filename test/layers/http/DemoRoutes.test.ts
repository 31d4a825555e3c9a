// The anonymous demo key (POST /api/v1/demo/key): $2, 24 hours, relay routes only, metered and debited, and NO
// receipts of any kind (no headers, no trailer, no chain rows, no receipt.signed event, no failed-call receipt).
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { checkLedger } from "../../../layers/AdminOperations.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { balanceMicros } from "../../support/tenant.ts"
import { Quotas } from "../../../services/Quotas.ts"
import { monthKey } from "../../../src/billing/month.ts"
import { DEFAULT_TIER_LIMITS } from "../../../src/billing/limits.ts"

const fx = useRelayFixture()

let network = 0
const demoKey = async (ip = `198.20.${Math.floor(++network / 250)}.${network % 250}`, body?: string) => {
  const res = await fetch(`${fx.gw.url}/api/v1/demo/key`, { method: "POST", headers: { "x-forwarded-for": ip }, body })
  return { res, json: await res.json() }
}

const issue = async () => {
  const { res, json } = await demoKey()
  expect(res.status).toBe(201)
  const [{ org_id: orgId }] = await fx.gw.query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", json.key_prefix)
  return { apiKey: json.api_key as string, orgId, json }
}

const relay = async (apiKey: string, body: string, path = "chat/completions", route: "chat.completions" | "embeddings" = "chat.completions") =>
  fetch(`${fx.gw.url}/api/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders(route, body)) },
    body
  })

const chat = (stream = false, model = "local-chat") =>
  JSON.stringify({ model, messages: [{ role: "user", content: "hello <EMAIL_1_ab12>" }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) })

const receiptHeaders = (res: Response) => [...res.headers.keys()].filter((h) => h.startsWith("x-service-receipt"))

const receiptRows = async (orgId: string) => ({
  v2: (await fx.gw.query("SELECT jti FROM receipts_v2 WHERE org_id = $1", orgId)).length,
  v1: (await fx.gw.query("SELECT jti FROM receipts_v1 WHERE org_id = $1", orgId)).length,
  failed: (await fx.gw.query("SELECT jti FROM receipts_failed WHERE org_id = $1", orgId)).length,
  chains: (await fx.gw.query("SELECT chain_id FROM receipt_chains WHERE org_id = $1", orgId)).length,
  signedEvents: (await fx.gw.query("SELECT id FROM outbox_events WHERE org_id = $1 AND event = 'receipt.signed'", orgId)).length
})

describe("POST /api/v1/demo/key", () => {
  it("issues a demo key with $2 of demo credit that expires in 24 hours, shown once", async () => {
    const before = Date.now()
    const { json, orgId } = await issue()
    expect(json).toMatchObject({ tier: "demo", balance_usd: "2.00", key_prefix: json.api_key.slice(0, 10) })
    expect(json.api_key).toMatch(/^svc_[a-z2-7]{52}$/)
    const expiresAt = Date.parse(json.expires_at)
    expect(expiresAt - before).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000)
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(24 * 3_600_000)
    expect(await balanceMicros(fx.gw, orgId)).toBe(2_000_000n)
    expect(await fx.gw.query("SELECT kind, amount_micros::text AS a FROM ledger_entries WHERE org_id = $1", orgId)).toEqual([
      { kind: "demo_credit", a: "2000000" }
    ])
    expect(await fx.gw.query("SELECT tier FROM api_keys WHERE org_id = $1", orgId)).toEqual([{ tier: "demo" }])
  })

  it("refuses a body with fields (400 invalid_request), and a third key from one network in a day (429 with Retry-After)", async () => {
    const bad = await demoKey(undefined, JSON.stringify({ email: "x@example.org" }))
    expect(bad.res.status).toBe(400)
    expect(bad.json.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("takes no input") })
    const ip = "198.21.0.1"
    expect((await demoKey(ip)).res.status).toBe(201)
    expect((await demoKey(ip, "{}")).res.status).toBe(201)
    const third = await demoKey(ip)
    expect(third.res.status).toBe(429)
    expect(third.json.error.code).toBe("rate_limited")
    expect(Number(third.res.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await demoKey("198.21.0.2")).res.status).toBe(201)
  })
})

describe("a demo key's calls", () => {
  it("are relayed, metered and debited, with no receipt header, trailer, chain row or receipt.signed event", async () => {
    const { apiKey, orgId } = await issue()
    const plain = await relay(apiKey, chat())
    expect(plain.status).toBe(200)
    expect((await plain.json()).choices[0].message.content).toContain("hello")
    expect(receiptHeaders(plain)).toEqual([])

    const streamed = await relay(apiKey, chat(true))
    expect(streamed.status).toBe(200)
    const text = await streamed.text()
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true)
    expect(text).not.toContain("receipt-v2")
    expect(receiptHeaders(streamed)).toEqual([])

    const embedded = await relay(apiKey, JSON.stringify({ model: "local-embed", input: "hello" }), "embeddings", "embeddings")
    expect(embedded.status).toBe(200)
    expect(receiptHeaders(embedded)).toEqual([])

    const usage = await fx.gw.query<{ receipt_jti: string | null; billed: string }>(
      "SELECT receipt_jti, billed_micros::text AS billed FROM usage_records WHERE org_id = $1",
      orgId
    )
    expect(usage).toHaveLength(3)
    expect(usage.every((u) => u.receipt_jti === null)).toBe(true)
    const billed = usage.reduce((sum, u) => sum + BigInt(u.billed), 0n)
    expect(billed > 0n).toBe(true)
    expect(await balanceMicros(fx.gw, orgId)).toBe(2_000_000n - billed)
    expect(await receiptRows(orgId)).toEqual({ v2: 0, v1: 0, failed: 0, chains: 0, signedEvents: 0 })
    // Metered without receipts by design: not a gap for the operator's check.
    expect((await fx.gw.runtime.runPromise(checkLedger)).usage_without_receipt.count).toBe(0)
  })

  it("get no failed-call receipt either, and 402 once the $2 is spent, with nothing forwarded", async () => {
    const { apiKey, orgId } = await issue()
    const unknown = await relay(apiKey, chat(false, "no-such-model"))
    expect(unknown.status).toBe(404)
    expect(receiptHeaders(unknown)).toEqual([])

    // Spend the demo credit (an operator adjustment keeps the ledger equal to the balance).
    await fx.gw.query("UPDATE wallets SET balance_micros = 0 WHERE org_id = $1", orgId)
    await fx.gw.query("INSERT INTO ledger_entries (org_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', -2000000, 'spent in test')", orgId)
    fx.provider.reset()
    const spent = await relay(apiKey, chat())
    expect(spent.status).toBe(402)
    expect((await spent.json()).error).toMatchObject({ code: "insufficient_balance", message: expect.stringMatching(/\w/) })
    expect(receiptHeaders(spent)).toEqual([])
    expect(fx.provider.received).toHaveLength(0)
    expect(await receiptRows(orgId)).toEqual({ v2: 0, v1: 0, failed: 0, chains: 0, signedEvents: 0 })
  })

  it("have no monthly token quota: the $2 is the budget, so many tokens still relay and a spent key gets 402, never 429 quota_exceeded", async () => {
    expect(DEFAULT_TIER_LIMITS.demo!.monthlyTokens).toBeNull()
    // More tokens this month than the old demo quota (1,000,000) and the free tier's (2,000,000) allowed.
    const manyTokens = (orgId: string) =>
      fx.gw.runtime.runPromise(Effect.flatMap(Effect.service(Quotas), (q) => q.add(orgId, "chat", monthKey(new Date()), 3_000_000)))
    const withCredit = await issue()
    await manyTokens(withCredit.orgId)
    expect((await relay(withCredit.apiKey, chat())).status).toBe(200)

    const spentKey = await issue()
    await manyTokens(spentKey.orgId)
    await fx.gw.query("UPDATE wallets SET balance_micros = 0 WHERE org_id = $1", spentKey.orgId)
    await fx.gw.query("INSERT INTO ledger_entries (org_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', -2000000, 'spent in test')", spentKey.orgId)
    fx.provider.reset()
    const spent = await relay(spentKey.apiKey, chat())
    expect(spent.status).toBe(402)
    expect((await spent.json()).error.code).toBe("insufficient_balance")
    expect(fx.provider.received).toHaveLength(0)
  })

  it("are refused with 401 key_expired once the key has expired, with nothing forwarded", async () => {
    const { apiKey, orgId } = await issue()
    await fx.gw.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE org_id = $1", orgId)
    fx.provider.reset()
    // The database announces the change, so even a node that had the key cached sees it within moments.
    let res = await relay(apiKey, chat())
    for (let i = 0; i < 40 && res.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 50))
      res = await relay(apiKey, chat())
    }
    expect(res.status).toBe(401)
    expect((await res.json()).error).toMatchObject({ code: "key_expired", message: expect.stringContaining("expired") })
    expect(receiptHeaders(res)).toEqual([])
    expect(fx.provider.received).toHaveLength(0)
  })

  it("may list models but nothing beyond the relay: 403 demo_key_restricted on the countersign route, 401 on portal routes", async () => {
    const { apiKey } = await issue()
    const models = await fetch(`${fx.gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })
    expect(models.status).toBe(200)
    const countersign = await fetch(`${fx.gw.url}/api/v1/receipts/countersign`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: "{}"
    })
    expect(countersign.status).toBe(403)
    expect((await countersign.json()).error).toMatchObject({ code: "demo_key_restricted", message: expect.stringContaining("relay") })
    for (const path of ["/api/v1/keys", "/api/v1/billing/balance", "/api/v1/receipts"]) {
      const res = await fetch(`${fx.gw.url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })
      expect(res.status).toBe(401)
      // The portal routes refuse every gateway key (the receipts list says auth_required, as the spec names it there).
      expect(["portal_auth_required", "auth_required"]).toContain((await res.json()).error.code)
    }
  })
})
