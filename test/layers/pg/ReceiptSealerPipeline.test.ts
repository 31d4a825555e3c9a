// The sealing pipeline of layers/pg/ReceiptSealer.ts (issue 24): rounds written as one statement for every tenant
// queued at once, the next round signed while the previous commits. What must hold whatever the pipelining does: no
// job is answered before its statement committed, a failed statement fails only its own jobs and writes nothing of
// them, every tenant's chains stay intact in a shared round, and two processes interleaving on one tenant never
// fork a chain.
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReceiptSealerPg } from "../../../layers/pg/ReceiptSealer.ts"
import { AppConfig } from "../../../services/AppConfig.ts"
import { ReceiptKeys } from "../../../services/ReceiptKeys.ts"
import { ReceiptSealer } from "../../../services/ReceiptSealer.ts"
import { Settlement } from "../../../services/Settlement.ts"
import { startTestGatewayPair, type TestGateway } from "../../support/gateway.ts"
import { independentHash, meteredCall, newOrg, sealInput } from "../../support/receipts.ts"
import { fundedKey } from "../../support/tenant.ts"

let gw: TestGateway
let other: TestGateway
beforeAll(async () => {
  // Two gateway nodes on one database (PostgreSQL: two separate runtimes and pools; PGlite: two runtimes over one
  // services layer, which is as far as a single-process database goes).
  ;[gw, other] = await startTestGatewayPair({ RECEIPT_CHAIN_VERIFY_MS: "0", TRANSPARENCY_SEQUENCE_MS: "0" })
})
afterAll(async () => {
  await gw?.close()
  await other?.close()
})

const run = <A>(node: TestGateway, effect: Effect.Effect<A, unknown, any>) => node.runtime.runPromise(effect as Effect.Effect<A>)
const sealer = Effect.service(ReceiptSealer)

const chain = (table: string, chainId: string) =>
  gw.query<{ seq: string; envelope: any }>(`SELECT seq::text AS seq, envelope FROM ${table} t WHERE chain_id = $1 ORDER BY t.seq`, chainId)

/** seq 1..n without gaps and every prev_hash the hash of the receipt before (genesis for seq 1). */
const expectIntactChain = (rows: ReadonlyArray<{ seq: string; envelope: any }>, n: number) => {
  expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: n }, (_, i) => i + 1))
  rows.forEach((row, i) => {
    expect(row.envelope.chain.seq).toBe(i + 1)
    expect(row.envelope.chain.prev_hash).toBe(i === 0 ? "0".repeat(64) : independentHash(rows[i - 1]!.envelope))
  })
}

/** A hold then its settlement with receipts, as a relayed call does it. */
const settleCall = (orgId: string, usageId?: string) =>
  Effect.gen(function*() {
    const hold = yield* (yield* Settlement).hold(orgId, 5_000n)
    return yield* (yield* sealer).settle({ orgId, seal: sealInput(orgId), metered: meteredCall(orgId, hold.id, usageId) })
  })

describe("sealing pipeline", () => {
  it("answers a settlement only after its statement committed: a blocked commit keeps the receipt from the caller", async () => {
    const orgId = await newOrg(gw)
    await run(gw, Effect.flatMap(sealer, (s) => s.seal(sealInput(orgId))))
    const chainId = `receipt-v2-org-${orgId}`
    // Another transaction holds the tenant's chain head row: relay_settle cannot lock it, so the round cannot commit.
    const locked = Deferred.makeUnsafe<void>()
    const release = Deferred.makeUnsafe<void>()
    const blocker = run(gw, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT chain_id FROM receipt_chains WHERE chain_id = ${chainId} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      }))
    }))
    await run(gw, Deferred.await(locked))
    let answered = false
    const sealed = run(gw, Effect.flatMap(sealer, (s) => s.seal(sealInput(orgId)))).then((r) => {
      answered = true
      return r
    })
    await new Promise((r) => setTimeout(r, 400))
    expect(answered).toBe(false)
    await run(gw, Deferred.succeed(release, undefined))
    await blocker
    const receipt = await sealed
    // By the time the caller has it, it is committed: another connection sees it.
    expect(receipt.v2.chain.seq).toBe(2)
    expect(await gw.query("SELECT jti FROM receipts_v2 WHERE jti = $1", receipt.jti)).toHaveLength(1)
    expect(await gw.query("SELECT jti FROM receipts_v1 WHERE jti = $1", receipt.jti)).toHaveLength(1)
  })

  it("writes tenants queued at the same moment in one commit, each with its own intact chains, debits and usage", async () => {
    const tenants = await Promise.all(Array.from({ length: 4 }, () => fundedKey(gw, "10")))
    const perTenant = 12
    const results = await run(gw, Effect.all(
      tenants.flatMap(({ orgId }) => Array.from({ length: perTenant }, () => settleCall(orgId))),
      { concurrency: "unbounded" }
    ))
    expect(results.every((r) => r.sealed !== undefined)).toBe(true)
    for (const { orgId } of tenants) {
      expectIntactChain(await chain("receipts_v2", `receipt-v2-org-${orgId}`), perTenant)
      expectIntactChain(await chain("receipts_v1", `tenant-acct_${orgId}`), perTenant)
      const [w] = await gw.query<{ balance: string; held: string }>(
        "SELECT balance_micros::text AS balance, held_micros::text AS held FROM wallets WHERE org_id = $1", orgId)
      expect(w).toEqual({ balance: String(10_000_000 - perTenant * 1_000), held: "0" })
      expect(await gw.query("SELECT id FROM usage_records WHERE org_id = $1", orgId)).toHaveLength(perTenant)
      expect(await gw.query("SELECT id FROM ledger_entries WHERE org_id = $1 AND kind = 'debit'", orgId)).toHaveLength(perTenant)
      expect(await gw.query("SELECT id FROM wallet_holds WHERE org_id = $1", orgId)).toEqual([])
    }
    // Rows inserted by one transaction share its xmin: some transaction wrote receipts of more than one tenant.
    const shared = await gw.query<{ tenants: string }>(
      `SELECT max(n)::text AS tenants FROM (SELECT xmin::text, count(DISTINCT org_id) AS n FROM receipts_v2 WHERE org_id = ANY($1) GROUP BY 1) t`,
      tenants.map((t) => t.orgId)
    )
    expect(Number(shared[0]!.tenants)).toBeGreaterThan(1)
  })

  it("fails only the job whose write failed, writing nothing of it; the round's other tenants and jobs commit", async () => {
    const good = await fundedKey(gw, "10")
    const bad = await fundedKey(gw, "10")
    const taken = `use_taken_${crypto.randomUUID().slice(0, 8)}`
    await run(gw, settleCall(bad.orgId, taken))
    // The same usage id again violates usage_records' primary key: that statement fails as a whole.
    const outcomes = await run(gw, Effect.all([
      ...Array.from({ length: 5 }, () => Effect.exit(settleCall(good.orgId))),
      ...Array.from({ length: 3 }, () => Effect.exit(settleCall(bad.orgId))),
      Effect.exit(settleCall(bad.orgId, taken)),
      ...Array.from({ length: 3 }, () => Effect.exit(settleCall(bad.orgId)))
    ], { concurrency: "unbounded" }))
    expect(outcomes.map((o) => o._tag)).toEqual([...Array(5).fill("Success"), ...Array(3).fill("Success"), "Failure", ...Array(3).fill("Success")])
    expectIntactChain(await chain("receipts_v2", `receipt-v2-org-${good.orgId}`), 5)
    // The failed call left no receipt, no usage, no debit: its tenant's chain goes on without a gap.
    expectIntactChain(await chain("receipts_v2", `receipt-v2-org-${bad.orgId}`), 7)
    expectIntactChain(await chain("receipts_v1", `tenant-acct_${bad.orgId}`), 7)
    expect(await gw.query("SELECT id FROM usage_records WHERE org_id = $1", bad.orgId)).toHaveLength(7)
    const [w] = await gw.query<{ balance: string; held: string }>(
      "SELECT balance_micros::text AS balance, held_micros::text AS held FROM wallets WHERE org_id = $1", bad.orgId)
    // Seven debits; the failed call's hold is still held (the relay releases it when its settlement fails).
    expect(w).toEqual({ balance: String(10_000_000 - 7 * 1_000), held: "5000" })
  })

  it("never forks a chain when two gateway nodes settle for one tenant at once, both pipelining", async () => {
    const { orgId } = await fundedKey(gw, "10")
    const perNode = 150
    const [a, b] = await Promise.all([
      run(gw, Effect.all(Array.from({ length: perNode }, () => settleCall(orgId)), { concurrency: 16 })),
      run(other, Effect.all(Array.from({ length: perNode }, () => settleCall(orgId)), { concurrency: 16 }))
    ])
    const jtis = [...a, ...b].map((r) => r.sealed!.jti)
    expect(new Set(jtis).size).toBe(perNode * 2)
    expectIntactChain(await chain("receipts_v2", `receipt-v2-org-${orgId}`), perNode * 2)
    expectIntactChain(await chain("receipts_v1", `tenant-acct_${orgId}`), perNode * 2)
    // Every receipt a caller got is the one stored under its seq.
    const stored = new Map((await chain("receipts_v2", `receipt-v2-org-${orgId}`)).map((r) => [r.envelope.jti, r.envelope]))
    for (const r of [...a, ...b]) expect(stored.get(r.sealed!.jti)).toEqual(r.sealed!.v2)
    const [w] = await gw.query<{ balance: string; held: string }>(
      "SELECT balance_micros::text AS balance, held_micros::text AS held FROM wallets WHERE org_id = $1", orgId)
    expect(w).toEqual({ balance: String(10_000_000 - perNode * 2 * 1_000), held: "0" })
  }, 120_000)
})

describe("relay_settle_many (migration 0017)", () => {
  const document = (orgId: string, durable: boolean) => ({
    org_id: orgId,
    low_balance_default_micros: "0",
    debit_micros: "0",
    heads: [],
    receipts_v2: [],
    receipts_v1: [],
    receipts_failed: [],
    transparency: [],
    usage: durable ? [{ ...meteredCall(orgId, "hold_none").usage, receipt_jti: null }] : [],
    ledger: [],
    outbox: [],
    holds: [],
    hold_requests: []
  })
  const commitSetting = (docs: ReadonlyArray<unknown>) =>
    run(gw, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT relay_settle_many(${JSON.stringify(docs)}::jsonb)`
        const [row] = yield* sql<{ s: string }>`SELECT current_setting('synchronous_commit') AS s`
        return row!.s
      }))
    }))

  it("commits without waiting for the WAL flush only when every batch is holds alone: a durable batch restores it", async () => {
    const a = await newOrg(gw)
    const b = await newOrg(gw)
    const [x, y] = [a, b].sort()
    expect(await commitSetting([document(x!, false), document(y!, false)])).toBe("off")
    expect(await commitSetting([document(x!, false), document(y!, true)])).toBe("on")
    expect(await commitSetting([document(x!, true), document(y!, false)])).toBe("on")
  })
})

describe("sealing pipeline shutdown", () => {
  it("writes every job queued before its layer closes: closing waits for the writer's last rounds", async () => {
    const orgId = await newOrg(gw)
    await run(gw, Effect.flatMap(sealer, (s) => s.seal(sealInput(orgId))))
    const chainId = `receipt-v2-org-${orgId}`
    const outcome = await run(gw, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // A sealer layer of its own (fresh: not the runtime's memoised one) over the gateway's database, closed while 40 seals wait on a blocked commit.
      const context = yield* Effect.context<SqlClient.SqlClient | ReceiptKeys | AppConfig>()
      const scope = yield* Scope.make()
      const own = Context.get(yield* Layer.buildWithScope(Layer.fresh(ReceiptSealerPg).pipe(Layer.provide(Layer.succeedContext(context))), scope), ReceiptSealer)
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const blocker = yield* Effect.forkDetach(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT chain_id FROM receipt_chains WHERE chain_id = ${chainId} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      const fibers = yield* Effect.forEach(Array.from({ length: 40 }), () => Effect.forkDetach(own.seal(sealInput(orgId))))
      yield* Effect.sleep("200 millis")
      const closing = yield* Effect.forkDetach(Scope.close(scope, Exit.void))
      yield* Effect.sleep("200 millis")
      const closedWhileBlocked = closing.pollUnsafe() !== undefined
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(blocker)
      yield* Fiber.join(closing)
      // The moment closing returns, every queued seal is committed.
      const rows = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM receipts_v2 WHERE org_id = ${orgId}`
      const exits = yield* Effect.forEach(fibers, Fiber.await)
      return { closedWhileBlocked, rows: Number(rows[0]!.n), answered: exits.filter(Exit.isSuccess).length }
    }))
    expect(outcome).toEqual({ closedWhileBlocked: false, rows: 41, answered: 40 })
    expectIntactChain(await chain("receipts_v2", chainId), 41)
  })
})
