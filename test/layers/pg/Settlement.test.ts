import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReceiptSealer } from "../../../services/ReceiptSealer.ts"
import { InsufficientBalance, Settlement } from "../../../services/Settlement.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fundedKey } from "../../support/tenant.ts"

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
})
afterAll(async () => {
  await gw.close()
})

const run = <A>(effect: Effect.Effect<A, unknown, Settlement | ReceiptSealer>) => gw.runtime.runPromise(effect)
const wallet = async (orgId: string) =>
  (await gw.query<{ held: string; balance: string }>(
    "SELECT held_micros::text AS held, balance_micros::text AS balance FROM wallets WHERE org_id = $1",
    orgId
  ))[0]
const holdRows = async (orgId: string) =>
  (await gw.query<{ id: string }>("SELECT id FROM wallet_holds WHERE org_id = $1 ORDER BY id", orgId)).map((r) => r.id)

describe("Settlement holds", () => {
  it("takes a hold only while the available balance is positive, and refuses with 402 insufficient_balance after", async () => {
    const { orgId } = await fundedKey(gw, "1")
    const first = await run(Effect.flatMap(Effect.service(Settlement), (s) => s.hold(orgId, 1_000_000n)))
    expect(first.amountMicros).toBe(1_000_000n)
    const refused = await run(Effect.flatMap(Effect.service(Settlement), (s) => Effect.flip(s.hold(orgId, 1n))))
    expect(refused).toBeInstanceOf(InsufficientBalance)
    expect(await wallet(orgId)).toEqual({ held: "1000000", balance: "1000000" })
    expect(await holdRows(orgId)).toEqual([first.id])
    await run(Effect.flatMap(Effect.service(Settlement), (s) => s.release(first)))
    expect(await wallet(orgId)).toEqual({ held: "0", balance: "1000000" })
    expect(await holdRows(orgId)).toEqual([])
  })

  it("grants concurrent holds in order while the balance lasts, through one tenant's batches, and never more", async () => {
    const { orgId } = await fundedKey(gw, "1")
    // 30 holds of $0.40 each against $1: the available balance stays positive for exactly the first three.
    const outcomes = await run(Effect.flatMap(Effect.service(Settlement), (s) =>
      Effect.all(Array.from({ length: 30 }, () => Effect.exit(s.hold(orgId, 400_000n))), { concurrency: "unbounded" })))
    expect(outcomes.filter((o) => o._tag === "Success")).toHaveLength(3)
    expect(await wallet(orgId)).toEqual({ held: "1200000", balance: "1000000" })
    expect(await holdRows(orgId)).toHaveLength(3)
  })

  it("the sweep returns expired holds to their wallets exactly once and leaves live holds alone", async () => {
    const { orgId } = await fundedKey(gw, "5")
    const past = new Date(Date.now() - 60_000)
    const future = new Date(Date.now() + 600_000)
    await run(Effect.flatMap(Effect.service(ReceiptSealer), (s) =>
      Effect.all([
        s.hold({ orgId, id: `hold_expired_a_${orgId}`, amountMicros: 300_000n, expiresAt: past }),
        s.hold({ orgId, id: `hold_expired_b_${orgId}`, amountMicros: 200_000n, expiresAt: past }),
        s.hold({ orgId, id: `hold_live_${orgId}`, amountMicros: 100_000n, expiresAt: future })
      ])))
    expect(await wallet(orgId)).toEqual({ held: "600000", balance: "5000000" })
    const swept = await run(Effect.flatMap(Effect.service(Settlement), (s) => Effect.all([s.sweepExpiredHolds, s.sweepExpiredHolds], { concurrency: 2 })))
    expect(swept[0] + swept[1]).toBeGreaterThanOrEqual(2)
    expect(await wallet(orgId)).toEqual({ held: "100000", balance: "5000000" })
    expect(await holdRows(orgId)).toEqual([`hold_live_${orgId}`])
  })
})

describe("relay_settle plans (migration 0013)", () => {
  it("runs with hash and merge joins off, so its batch joins probe receipt_chains by key at any table size", async () => {
    const [fn] = await gw.query<{ config: Array<string> }>("SELECT proconfig AS config FROM pg_proc WHERE proname = 'relay_settle'")
    expect(fn.config).toEqual(expect.arrayContaining(["enable_hashjoin=off", "enable_mergejoin=off"]))

    // 15,000 chains (thousands of organisations): the size at which the planner, left alone, scans the whole table.
    await gw.query(`INSERT INTO receipt_chains (chain_id, org_id, kind, last_seq, last_hash)
      SELECT 'receipt-v2-org-plan_' || i, 'plan_' || i, 'v2', 1, repeat('0', 64) FROM generate_series(1, 15000) i`)
    await gw.query("ANALYZE receipt_chains")
    // The function's head lock, planned with and without the function's settings.
    const planOf = async (settings: string) => {
      await gw.query(`CREATE OR REPLACE FUNCTION test_head_lock_plan() RETURNS SETOF text LANGUAGE plpgsql ${settings} AS $$
        BEGIN RETURN QUERY EXPLAIN SELECT c.chain_id FROM receipt_chains c
          JOIN jsonb_to_recordset('[{"chain_id":"receipt-v2-org-plan_7","expect_seq":1}]'::jsonb) AS x(chain_id text, expect_seq bigint)
          ON x.chain_id = c.chain_id ORDER BY c.chain_id FOR UPDATE OF c; END $$`)
      return (await gw.query<{ line: string }>("SELECT test_head_lock_plan() AS line")).map((r) => r.line).join("\n")
    }
    try {
      expect(await planOf("")).toContain("Seq Scan on receipt_chains")
      const tuned = await planOf("SET enable_hashjoin = off SET enable_mergejoin = off")
      expect(tuned).toContain("Index Scan using receipt_chains_pkey")
      expect(tuned).not.toContain("Seq Scan on receipt_chains")
    } finally {
      await gw.query("DROP FUNCTION IF EXISTS test_head_lock_plan()")
      await gw.query("DELETE FROM receipt_chains WHERE org_id LIKE 'plan_%'")
    }
  })
})

