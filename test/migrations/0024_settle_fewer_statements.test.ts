// Migration 0024 redefines relay_settle in fewer statements. What changed in its contract: a batch says whether any
// chain it writes is new (`new_chains`), so known heads are only locked, not upserted first; a batch that took a
// chain for existing when it has no head row is refused and told the chain is at genesis; a document without the
// flag (an older gateway's) still creates head rows. Holds released, the debit and the low-balance event moved into
// one statement. The sealer's own tests (test/layers/pg/ReceiptSealer*.test.ts) cover the completed-call batches.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fundedKey } from "../support/tenant.ts"

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
})
afterAll(async () => {
  await gw.close()
})

const GENESIS = "0".repeat(64)
const settle = async (batch: Record<string, unknown>) =>
  JSON.parse((await gw.query<{ r: string }>("SELECT relay_settle_many($1::jsonb)::text AS r", JSON.stringify([batch])))[0]!.r)
const chainRows = (chainId: string) =>
  gw.query<{ seq: string; hash: string }>("SELECT last_seq::text AS seq, last_hash AS hash FROM receipt_chains WHERE chain_id = $1", chainId)
const receiptRows = (chainId: string) => gw.query<{ jti: string }>("SELECT jti FROM receipts_v2 WHERE chain_id = $1", chainId)
/** A receipts_v2 row and the head move that goes with it (the function stores envelopes as given). */
const oneReceipt = (orgId: string, chainId: string, from: { seq: number; hash: string }) => {
  const jti = crypto.randomUUID().replaceAll("-", "")
  return {
    org_id: orgId,
    heads: [{
      chain_id: chainId,
      org_id: orgId,
      kind: "v2",
      expect_seq: String(from.seq),
      expect_hash: from.hash,
      new_seq: String(from.seq + 1),
      new_hash: "a".repeat(64)
    }],
    receipts_v2: [{ jti, org_id: orgId, chain_id: chainId, seq: String(from.seq + 1), envelope: { jti } }],
    jti
  }
}

describe("migration 0024: relay_settle in fewer statements", () => {
  it("refuses a batch that takes a chain for existing when it has no head row, writes nothing, and reports the chain at genesis", async () => {
    const { orgId } = await fundedKey(gw, "1")
    const chainId = `receipt-v2-org-${orgId}-missing`
    const { jti: _, ...batch } = oneReceipt(orgId, chainId, { seq: 4, hash: "b".repeat(64) })
    expect(await settle({ ...batch, new_chains: false, debit_micros: "10" })).toEqual([
      { ok: false, heads: [{ chain_id: chainId, last_seq: 0, last_hash: GENESIS }] }
    ])
    expect(await chainRows(chainId)).toEqual([])
    expect(await receiptRows(chainId)).toEqual([])
    expect((await gw.query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", orgId))[0]!.b).toBe("1000000")
  })

  it("creates a new chain's head row when the batch says so, and when the document predates the flag", async () => {
    const { orgId } = await fundedKey(gw, "1")
    for (const [chainId, flag] of [[`receipt-v2-org-${orgId}-flagged`, { new_chains: true }], [`receipt-v2-org-${orgId}-older`, {}]] as const) {
      const { jti, ...batch } = oneReceipt(orgId, chainId, { seq: 0, hash: GENESIS })
      expect(await settle({ ...batch, ...flag })).toEqual([{ ok: true, granted: [] }])
      expect(await chainRows(chainId)).toEqual([{ seq: "1", hash: "a".repeat(64) }])
      expect(await receiptRows(chainId)).toEqual([{ jti }])
    }
  })

  it("moves a known head without creating it, and refuses a head that moved, writing nothing of that batch", async () => {
    const { orgId } = await fundedKey(gw, "1")
    const chainId = `receipt-v2-org-${orgId}-known`
    const { jti: first, ...genesis } = oneReceipt(orgId, chainId, { seq: 0, hash: GENESIS })
    expect(await settle({ ...genesis, new_chains: true })).toEqual([{ ok: true, granted: [] }])
    const { jti: second, ...next } = oneReceipt(orgId, chainId, { seq: 1, hash: "a".repeat(64) })
    expect(await settle({ ...next, new_chains: false })).toEqual([{ ok: true, granted: [] }])
    expect(await chainRows(chainId)).toEqual([{ seq: "2", hash: "a".repeat(64) }])
    const { jti: _, ...stale } = oneReceipt(orgId, chainId, { seq: 1, hash: "a".repeat(64) })
    expect(await settle({ ...stale, new_chains: false })).toEqual([
      { ok: false, heads: [{ chain_id: chainId, last_seq: 2, last_hash: "a".repeat(64) }] }
    ])
    expect((await receiptRows(chainId)).map((r) => r.jti).sort()).toEqual([first, second].sort())
  })

  it("releases a batch's wallet holds and debits the wallet in one statement, raising billing.low_balance once per crossing", async () => {
    const { orgId } = await fundedKey(gw, "1")
    await gw.query("UPDATE wallets SET held_micros = 300000 WHERE org_id = $1", orgId)
    await gw.query(
      "INSERT INTO wallet_holds (id, org_id, amount_micros, expires_at) VALUES ($1, $2, 300000, now() + interval '1 hour')",
      `hold_a_${orgId}`,
      orgId
    )
    const lowBalance = () => gw.query<{ data: string }>("SELECT data::text AS data FROM outbox_events WHERE org_id = $1 AND event = 'billing.low_balance'", orgId)
    // 1.000000 - 0.600000 = 0.400000: below the 0.500000 default threshold, crossed by this debit.
    expect(await settle({ org_id: orgId, holds: [`hold_a_${orgId}`, "hold_in_redis"], debit_micros: "600000", low_balance_default_micros: "500000" }))
      .toEqual([{ ok: true, granted: [] }])
    expect(await gw.query("SELECT balance_micros::text AS balance, held_micros::text AS held FROM wallets WHERE org_id = $1", orgId))
      .toEqual([{ balance: "400000", held: "0" }])
    expect(await gw.query("SELECT id FROM wallet_holds WHERE org_id = $1", orgId)).toEqual([])
    expect((await lowBalance()).map((r) => JSON.parse(r.data))).toEqual([
      { balance_micros: 400000, balance_usd: "0.400000", threshold_micros: 500000, threshold_usd: "0.500000" }
    ])
    // Already below: a further debit does not raise it again.
    expect(await settle({ org_id: orgId, holds: [], debit_micros: "100000", low_balance_default_micros: "500000" })).toEqual([{ ok: true, granted: [] }])
    expect(await gw.query("SELECT balance_micros::text AS balance FROM wallets WHERE org_id = $1", orgId)).toEqual([{ balance: "300000" }])
    expect(await lowBalance()).toHaveLength(1)
  })
})
