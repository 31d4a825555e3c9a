import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { checkLedger, creditWallet } from "../../layers/AdminOperations.ts"
import { formatUsd } from "../../src/billing/money.ts"
import { maxCostHoldMicros } from "../../src/billing/pricing.ts"
import { attestedHeaders } from "../support/engine.ts"
import { startTestGateway, startTestGatewayPair, type TestGateway } from "../support/gateway.ts"
import { balanceMicros, fundedKey } from "../support/tenant.ts"

/** Rate windows out of the way, so only the wallet decides admission. */
const NO_LIMITS = JSON.stringify({ free: { keyPerMinute: null, tenantPer60s: 100000, tenantPer3600s: 1000000, monthlyTokens: null } })

const chatBody = (n: number) => JSON.stringify({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: `Hello <EMAIL_1> #${n}` }] })

const relayChat = async (gw: TestGateway, apiKey: string, body: string) =>
  fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
    body
  })

let provider: FakeProvider
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0, delayMs: 5 })
})
afterAll(async () => {
  await provider.close()
})
beforeEach(() => provider.reset())

describe("wallet under a burst", () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url, RATE_LIMITS_JSON: NO_LIMITS })
  })
  afterAll(async () => {
    await gw.close()
  })

  it("200 concurrent calls against a wallet worth ~50: bounded overdraft, ledger = balance, one usage + debit + receipt per forwarded call", async () => {
    // What one call costs, measured on another wallet.
    const probe = await fundedKey(gw)
    expect((await relayChat(gw, probe.apiKey, chatBody(0))).status).toBe(200)
    const perCall = BigInt((await gw.query<{ b: string }>("SELECT billed_micros::text AS b FROM usage_records WHERE org_id = $1", probe.orgId))[0].b)
    expect(perCall).toBeGreaterThan(0n)
    provider.reset()

    const { apiKey, orgId } = await fundedKey(gw, "0")
    await gw.runtime.runPromise(creditWallet({ org_id: orgId, usd: formatUsd(perCall * 50n) }))
    // low-balance threshold at half the wallet: exactly one billing.low_balance for the one downward crossing
    await gw.query("UPDATE wallets SET low_balance_threshold_micros = $1 WHERE org_id = $2", String(perCall * 25n), orgId)

    const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => relayChat(gw, apiKey, chatBody(i)).then(async (r) => {
      await r.arrayBuffer()
      return r.status
    })))
    const ok = statuses.filter((s) => s === 200).length
    expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([])
    expect(ok).toBeGreaterThan(0)
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0)

    const forwarded = provider.received.length
    expect(forwarded).toBe(ok)

    // the documented bound (docs/decisions.md, Billing): below zero by at most one call's hold
    const hold = maxCostHoldMicros({
      bodyBytes: Buffer.byteLength(chatBody(199)),
      maxOutputTokens: 16,
      inputUsdPerMTok: "1.00",
      outputUsdPerMTok: "2.00",
      keyMode: "pooled"
    })
    const balance = await balanceMicros(gw, orgId)
    expect(balance).toBeGreaterThanOrEqual(-hold)
    expect((await gw.runtime.runPromise(checkLedger)).ok).toBe(true)

    const usage = await gw.query<{ id: string; receipt_jti: string | null }>("SELECT id, receipt_jti FROM usage_records WHERE org_id = $1", orgId)
    expect(usage).toHaveLength(forwarded)
    const debits = await gw.query<{ usage_id: string }>("SELECT usage_id FROM ledger_entries WHERE org_id = $1 AND kind = 'debit'", orgId)
    expect(debits).toHaveLength(forwarded)
    expect(new Set(debits.map((d) => d.usage_id))).toEqual(new Set(usage.map((u) => u.id)))
    const receipts = await gw.query<{ jti: string }>("SELECT jti FROM receipts_v2 WHERE org_id = $1", orgId)
    expect(receipts).toHaveLength(forwarded)
    expect(new Set(receipts.map((r) => r.jti))).toEqual(new Set(usage.map((u) => u.receipt_jti)))
    expect(await gw.query("SELECT 1 FROM wallet_holds WHERE org_id = $1", orgId)).toHaveLength(0)

    expect(await gw.query("SELECT 1 FROM outbox_events WHERE org_id = $1 AND event = 'billing.low_balance'", orgId)).toHaveLength(1)
  }, 120_000)

  it("402 insufficient_balance forwards nothing and meters nothing", async () => {
    const { apiKey, orgId } = await fundedKey(gw, "0")
    const res = await relayChat(gw, apiKey, chatBody(1))
    expect(res.status).toBe(402)
    expect((await res.json()).error.code).toBe("insufficient_balance")
    expect(provider.received).toHaveLength(0)
    expect(await gw.query("SELECT 1 FROM usage_records WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("a credit back above the threshold re-arms billing.low_balance for the next crossing", async () => {
    const { apiKey, orgId } = await fundedKey(gw, "0")
    await gw.runtime.runPromise(creditWallet({ org_id: orgId, usd: "0.001" }))
    // threshold just under the starting balance: the first call crosses it
    await gw.query("UPDATE wallets SET low_balance_threshold_micros = 999 WHERE org_id = $1", orgId)
    expect((await relayChat(gw, apiKey, chatBody(1))).status).toBe(200)
    expect((await relayChat(gw, apiKey, chatBody(2))).status).toBe(200)
    expect(await gw.query("SELECT 1 FROM outbox_events WHERE org_id = $1 AND event = 'billing.low_balance'", orgId)).toHaveLength(1)
    await gw.runtime.runPromise(creditWallet({ org_id: orgId, usd: "0.001" }))
    // back at (not below) the threshold: the next debit crosses it again
    await gw.query("UPDATE wallets SET low_balance_threshold_micros = balance_micros WHERE org_id = $1", orgId)
    expect((await relayChat(gw, apiKey, chatBody(3))).status).toBe(200)
    const events = await gw.query("SELECT 1 FROM outbox_events WHERE org_id = $1 AND event = 'billing.low_balance'", orgId)
    expect(events).toHaveLength(2)
  })
})

describe("monthly token quota", () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
  })
  afterAll(async () => {
    await gw.close()
  })

  it("answers 429 quota_exceeded, Retry-After to next month (UTC) and RateLimit headers once the org's monthly tokens are used", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    await gw.query("INSERT INTO org_limits (org_id, capability, monthly_tokens) VALUES ($1, 'chat', 5)", orgId)
    const first = await relayChat(gw, apiKey, chatBody(1))
    expect(first.status).toBe(200)
    expect(first.headers.get("ratelimit-policy")).toContain(`"tenant-month";q=5`)
    const second = await relayChat(gw, apiKey, chatBody(2))
    expect(second.status).toBe(429)
    const refused = await second.json()
    expect(refused).toEqual({
      error: {
        code: "quota_exceeded",
        message: "The monthly token quota for chat (5 tokens) is used up; it resets at the start of next month (UTC).",
        quota_tokens: 5,
        used_tokens: refused.error.used_tokens
      }
    })
    expect(refused.error.used_tokens).toBeGreaterThanOrEqual(5)
    expect(second.headers.get("ratelimit-policy")).toContain(`"tenant-month";q=5;w=2592000`)
    const failed = JSON.parse(Buffer.from(second.headers.get("x-service-receipt-failed")!, "base64").toString())
    expect(failed).toMatchObject({ status: 429, error_code: "quota_exceeded" })
    const now = new Date()
    const expected = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000
    expect(Math.abs(Number(second.headers.get("retry-after")) - expected)).toBeLessThan(30)
    expect(second.headers.get("ratelimit")).toMatch(/"tenant-month";r=0;t=\d+/)
    expect(provider.received).toHaveLength(1)
  })

  it("the free tier's default quota applies per capability (RATE_LIMITS_JSON monthlyTokens)", async () => {
    const local = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url, RATE_LIMITS_JSON: JSON.stringify({ free: { monthlyTokens: 1 } }) })
    try {
      const { apiKey } = await fundedKey(local)
      expect((await relayChat(local, apiKey, chatBody(1))).status).toBe(200)
      expect((await relayChat(local, apiKey, chatBody(2))).status).toBe(429)
    } finally {
      await local.close()
    }
  })
})

describe("rate limits shared by two gateway nodes", () => {
  it("the 21st call of a free key within a minute is 429 whichever node serves it", async () => {
    const [a, b] = await startTestGatewayPair({ LOCAL_PROVIDER_URL: provider.url })
    try {
      const { apiKey } = await fundedKey(a)
      const statuses: Array<number> = []
      for (let i = 0; i < 21; i++) {
        const res = await relayChat(i % 2 === 0 ? a : b, apiKey, chatBody(i))
        await res.arrayBuffer()
        statuses.push(res.status)
      }
      expect(statuses.slice(0, 20)).toEqual(Array(20).fill(200))
      expect(statuses[20]).toBe(429)
      // and on the other node too
      const other = await relayChat(a, apiKey, chatBody(99))
      expect(other.status).toBe(429)
      expect((await other.json()).error.code).toBe("rate_limited")
      expect(provider.received).toHaveLength(20)
    } finally {
      await a.close()
      await b.close()
    }
  }, 60_000)
})
