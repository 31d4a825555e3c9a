import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkLedger, creditWallet } from "../../layers/AdminOperations.ts"
import { gatewayServicesLayer } from "../../layers/GatewayLive.ts"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { attestedHeaders } from "../support/engine.ts"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { exited, startGatewayProcess as startChild } from "../support/gatewayProcess.ts"

const NO_LIMITS = JSON.stringify({ free: { keyPerMinute: null, tenantPer60s: 100000, tenantPer3600s: 1000000, monthlyTokens: null } })

const chat = async (url: string, apiKey: string, n: number) => {
  const body = JSON.stringify({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: `crash <EMAIL_1> ${n}` }] })
  const res = await fetch(`${url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
    body
  })
  await res.arrayBuffer()
  return res.status
}

let provider: FakeProvider
let storage: TestStorage
let dataDir: string
let env: Record<string, string>
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0, delayMs: 40 })
  storage = await createTestStorage()
  dataDir = mkdtempSync(join(tmpdir(), "pr-crash-"))
  env = {
    ...storage.env,
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    TRACE_SAMPLE_RATIO: "0",
    LOCAL_PROVIDER_URL: provider.url,
    RATE_LIMITS_JSON: NO_LIMITS
  }
})
afterAll(async () => {
  await provider.close()
  await storage.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

/** The same storage opened in this process (for PGlite only once no gateway holds it). */
const withStorage = async <A>(effect: Effect.Effect<A, any, any>) => {
  const runtime = ManagedRuntime.make(gatewayServicesLayer({ ...env, LOG_LEVEL: "error" }) as Layer.Layer<any, any, never>)
  try {
    return await runtime.runPromise(effect as Effect.Effect<A, any, never>)
  } finally {
    await runtime.dispose()
  }
}
const query = <A>(statement: string, ...params: Array<unknown>) =>
  Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(statement, params)) as Effect.Effect<ReadonlyArray<A>, any, never>

describe(`gateway killed with SIGKILL mid-load (${process.env.DATABASE_URL ? "PostgreSQL" : "embedded PGlite on disk"})`, () => {
  it("after restart, receipts, debits and usage records still match one to one and the ledger equals the balance", async () => {
    const first = await startChild(env)
    const issued = await fetch(`${first.url}/api/v1/self-service/key`, { method: "POST", body: "{}" })
    expect(issued.status).toBe(201)
    const { api_key: apiKey, key_prefix: keyPrefix } = await issued.json()
    if (storage.mode.sql === "postgres") {
      await withStorage(creditWallet({ key_prefix: keyPrefix, usd: "50" }))
    } else {
      const token = readFileSync(join(dataDir, "admin-token"), "utf8").trim()
      const credited = await fetch(`${first.url}/api/admin/wallets/credit`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ key_prefix: keyPrefix, usd: "50" })
      })
      expect(credited.status).toBe(200)
    }

    // A steady load; the kill lands while calls are in flight (some forwarded, some settling).
    let stop = false
    const statuses = new Map<number, number>()
    const load = Array.from({ length: 24 }, async (_, w) => {
      let n = 0
      while (!stop) {
        const status = await chat(first.url, apiKey, w * 10_000 + n++).catch(() => 0)
        if (status === 0) stop = true
        else statuses.set(status, (statuses.get(status) ?? 0) + 1)
      }
    })
    // kill once the load is well under way (however slow this machine is today)
    for (let waited = 0; provider.received.length < 30 && waited < 60_000; waited += 50) await new Promise((r) => setTimeout(r, 50))
    const forwardedBeforeKill = provider.received.length
    expect({ forwardedBeforeKill, statuses: Object.fromEntries(statuses) }).toMatchObject({ statuses: { 200: expect.any(Number) } })
    expect(forwardedBeforeKill).toBeGreaterThan(10)
    first.child.kill("SIGKILL")
    await exited(first.child)
    stop = true
    await Promise.all(load)

    const second = await startChild(env)
    expect(await chat(second.url, apiKey, -1)).toBe(200)
    second.child.kill("SIGTERM")
    await exited(second.child)

    const result = await withStorage(Effect.gen(function*() {
      const org = (yield* query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", keyPrefix))[0].org_id
      const usage = yield* query<{ id: string; receipt_jti: string | null }>("SELECT id, receipt_jti FROM usage_records WHERE org_id = $1", org)
      const debits = yield* query<{ usage_id: string | null }>("SELECT usage_id FROM ledger_entries WHERE org_id = $1 AND kind = 'debit'", org)
      const receipts = yield* query<{ jti: string }>("SELECT jti FROM receipts_v2 WHERE org_id = $1", org)
      const holds = yield* query<{ held: string; sum: string }>(
        `SELECT w.held_micros::text AS held, COALESCE((SELECT SUM(amount_micros) FROM wallet_holds h WHERE h.org_id = w.org_id), 0)::text AS sum
         FROM wallets w WHERE w.org_id = $1`, org)
      return { usage, debits, receipts, holds, ledger: yield* checkLedger }
    }))
    expect(result.usage.length).toBeGreaterThan(10)
    expect(result.usage.length).toBeLessThanOrEqual(provider.received.length)
    expect(result.debits).toHaveLength(result.usage.length)
    expect(new Set(result.debits.map((d) => d.usage_id))).toEqual(new Set(result.usage.map((u) => u.id)))
    expect(result.receipts).toHaveLength(result.usage.length)
    expect(new Set(result.receipts.map((r) => r.jti))).toEqual(new Set(result.usage.map((u) => u.receipt_jti)))
    expect(result.ledger.ok).toBe(true)
    // holds of calls cut by the kill stay reserved (until they expire), consistently with the hold rows
    expect(result.holds[0].held).toBe(result.holds[0].sum)
  }, 420_000)
})
