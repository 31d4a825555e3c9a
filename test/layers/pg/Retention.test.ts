// Retention (RETENTION_DAYS): receipts, usage records and finished webhook deliveries older than the period are
// dropped by the admin command; each chain keeps verifying from its anchor (the last dropped receipt); the receipts
// API answers 410 receipt_expired for a dropped receipt; transparency leaves, newer rows and the ledger are untouched.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { ChainVerifier } from "../../../services/ChainVerifier.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { independentHash } from "../../support/receipts.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"
import { api, orgWithToken, startReceiver, waitFor } from "../webhookTestKit.ts"

const fx = useRelayFixture({ RETENTION_DAYS: "30", RECEIPT_CHAIN_VERIFY_MS: "0", WEBHOOK_ALLOW_LOOPBACK: "1", WEBHOOK_POLL_MS: "100" })

const relay = async (apiKey: string, text: string) => {
  const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: text }] })
  const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
    body
  })
  expect(res.status).toBe(200)
  await res.text()
}

const verifyAll = () => fx.gw.runtime.runPromise(Effect.flatMap(Effect.service(ChainVerifier), (v) => v.verifyAll))
const token = (orgId: string, abilities: Array<string>) =>
  fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities }) as Effect.Effect<{ token: string }, unknown, any>).then((r) => r.token)

describe("retention", () => {
  it("drops what is older than RETENTION_DAYS, keeps every chain verifiable from its anchor, answers 410 for a dropped receipt, touches nothing newer", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const receiver = await startReceiver()
    try {
      const manager = await token(orgId, ["webhooks.manage", "ability:keys.read"])
      const endpoint = await api(fx.gw, manager, "POST", "/api/v1/webhooks/endpoints", { url: receiver.url, events: ["receipt.signed"] })
      expect(endpoint.status).toBe(201)
      for (const n of [1, 2, 3, 4]) await relay(apiKey, `call ${n}`)
      await waitFor(async () => (await fx.gw.query<{ n: string }>("SELECT count(*)::text AS n FROM webhook_deliveries WHERE org_id = $1 AND status = 'delivered'", orgId))[0]!.n === "4", 20_000, "4 deliveries")

      const v2 = await fx.gw.query<{ jti: string; seq: string; chain_id: string; envelope: Record<string, unknown> }>(
        "SELECT jti, seq::text AS seq, chain_id, envelope FROM receipts_v2 WHERE org_id = $1 ORDER BY seq", orgId)
      expect(v2.map((r) => r.seq)).toEqual(["1", "2", "3", "4"])
      const old = v2.slice(0, 2).map((r) => r.jti)
      const v1Chain = (await fx.gw.query<{ chain_id: string }>("SELECT DISTINCT chain_id FROM receipts_v1 WHERE org_id = $1", orgId))[0]!.chain_id
      const v1Second = (await fx.gw.query<{ envelope: Record<string, unknown> }>("SELECT envelope FROM receipts_v1 WHERE chain_id = $1 AND seq = 2", v1Chain))[0]!.envelope
      // The first two calls are made 40 days old: their receipts, usage records and deliveries.
      for (const table of ["receipts_v2", "receipts_v1"]) {
        await fx.gw.query(`UPDATE ${table} SET created_at = now() - interval '40 days' WHERE jti = ANY($1)`, old)
      }
      await fx.gw.query("UPDATE usage_records SET finished_at = now() - interval '40 days' WHERE receipt_jti = ANY($1)", old)
      await fx.gw.query("UPDATE webhook_deliveries SET created_at = now() - interval '40 days' WHERE data->>'jti' = ANY($1)", old)
      // A tree head sequences every pending leaf first.
      const sthBefore = await (await fetch(`${fx.gw.url}/api/v1/transparency/sth`)).json()
      const leavesBefore = await fx.gw.query<{ n: string }>("SELECT count(*)::text AS n FROM transparency_leaves")

      const { token: admin } = await orgWithToken(fx.gw, ["ability:admin"], "operator")
      const applied = await api(fx.gw, admin, "POST", "/api/admin/retention/apply", {})
      expect(applied.status).toBe(200)
      expect(applied.json).toMatchObject({ receipts_v2: 2, receipts_v1: 2, receipts_failed: 0, usage_records: 2, webhook_deliveries: 2, chains_anchored: 2 })
      expect(Date.parse(applied.json.cutoff)).toBeGreaterThan(Date.now() - 31 * 86_400_000)
      expect(Date.parse(applied.json.cutoff)).toBeLessThan(Date.now() - 29 * 86_400_000)

      // Gone: exactly the old rows. Kept: the newer ones, their usage and deliveries, every transparency leaf.
      expect((await fx.gw.query<{ seq: string }>("SELECT seq::text AS seq FROM receipts_v2 WHERE org_id = $1 ORDER BY seq", orgId)).map((r) => r.seq)).toEqual(["3", "4"])
      expect((await fx.gw.query<{ seq: string }>("SELECT seq::text AS seq FROM receipts_v1 WHERE chain_id = $1 ORDER BY seq", v1Chain)).map((r) => r.seq)).toEqual(["3", "4"])
      expect((await fx.gw.query<{ receipt_jti: string }>("SELECT receipt_jti FROM usage_records WHERE org_id = $1 ORDER BY finished_at", orgId)).map((r) => r.receipt_jti))
        .toEqual([v2[2]!.jti, v2[3]!.jti])
      expect((await fx.gw.query<{ jti: string }>("SELECT data->>'jti' AS jti FROM webhook_deliveries WHERE org_id = $1 ORDER BY id", orgId)).map((r) => r.jti))
        .toEqual([v2[2]!.jti, v2[3]!.jti])
      expect(await fx.gw.query("SELECT count(*)::text AS n FROM transparency_leaves")).toEqual(leavesBefore)
      const sthAfter = await (await fetch(`${fx.gw.url}/api/v1/transparency/sth`)).json()
      expect({ size: sthAfter.tree_size, root: sthAfter.root_hash }).toEqual({ size: sthBefore.tree_size, root: sthBefore.root_hash })
      expect((await fetch(`${fx.gw.url}/api/v1/transparency/proof/${old[0]}`)).status).toBe(200)

      // The anchors: the last dropped receipt of each chain, hashing to what the first kept receipt links to.
      const anchors = await fx.gw.query<{ chain_id: string; seq: string; hash: string }>("SELECT chain_id, seq::text AS seq, hash FROM receipt_chain_anchors ORDER BY chain_id")
      expect(anchors).toEqual([
        { chain_id: v2[0]!.chain_id, seq: "2", hash: independentHash(v2[1]!.envelope) },
        { chain_id: v1Chain, seq: "2", hash: independentHash(v1Second) }
      ].sort((a, b) => a.chain_id.localeCompare(b.chain_id)))
      expect((v2[2]!.envelope.chain as { prev_hash: string }).prev_hash).toBe(independentHash(v2[1]!.envelope))

      // The chain verifier walks both chains from their anchors: clean, no incident.
      const verdicts = await verifyAll()
      expect(verdicts.filter((v) => v.org_id === orgId).map((v) => ({ chain: v.chain_id, ok: v.ok, reason: v.reason })).sort((a, b) => a.chain.localeCompare(b.chain)))
        .toEqual([{ chain: v2[0]!.chain_id, ok: true, reason: null }, { chain: v1Chain, ok: true, reason: null }].sort((a, b) => a.chain.localeCompare(b.chain)))
      expect(await fx.gw.query("SELECT * FROM chain_incidents")).toEqual([])
      // POST /receipts/verify of the first kept receipt still shows its link (to the anchor).
      const verified = await fetch(`${fx.gw.url}/api/v1/receipts/verify`, { method: "POST", body: JSON.stringify(v2[2]!.envelope) })
      expect(verified.status).toBe(200)
      expect((await verified.json()).checks.at(-1)).toMatchObject({ label: "chain linkage (seq and prev_hash)", status: "ok" })

      // The receipts API: a dropped receipt is 410 receipt_expired (not 404), a kept one is served, an unknown is 404.
      const reader = await token(orgId, ["ability:keys.read"])
      const dropped = await api(fx.gw, reader, "GET", `/api/v1/receipts/${old[0]}`)
      expect(dropped.status).toBe(410)
      expect(dropped.json.error.code).toBe("receipt_expired")
      const kept = await api(fx.gw, reader, "GET", `/api/v1/receipts/${v2[2]!.jti}`)
      expect(kept.status).toBe(200)
      expect(kept.json.jti).toBe(v2[2]!.jti)
      expect((await api(fx.gw, reader, "GET", `/api/v1/receipts/${"0".repeat(32)}`)).status).toBe(404)

      // The ledger check agrees (usage and receipts went together); the run is in the audit log and retention_runs.
      const ledger = await fetch(`${fx.gw.url}/api/admin/ledger/check`, { headers: { authorization: `Bearer ${admin}` } })
      expect((await ledger.json()).ok).toBe(true)
      const audit = await fx.gw.query<{ actor: string; details: Record<string, unknown> }>("SELECT actor, details FROM audit_log WHERE action = 'retention.applied'")
      expect(audit).toHaveLength(1)
      expect(audit[0]!.actor).toMatch(/^portal-token:ptk_/)
      expect(audit[0]!.details).toMatchObject({ receipts_v2: 2, usage_records: 2, webhook_deliveries: 2 })

      // A second run finds nothing; the chain goes on and still verifies.
      const again = await api(fx.gw, admin, "POST", "/api/admin/retention/apply", {})
      expect(again.json).toMatchObject({ receipts_v2: 0, receipts_v1: 0, usage_records: 0, webhook_deliveries: 0, chains_anchored: 0 })
      await relay(apiKey, "call 5")
      expect((await verifyAll()).filter((v) => v.org_id === orgId).every((v) => v.ok)).toBe(true)

      // The verifier does rely on the anchor: a changed anchor is a break.
      await fx.gw.query("UPDATE receipt_chain_anchors SET hash = repeat('0', 64) WHERE chain_id = $1", v2[0]!.chain_id)
      const broken = (await verifyAll()).find((v) => v.chain_id === v2[0]!.chain_id)!
      expect(broken).toMatchObject({ ok: false, seq: 2, reason: "the retention anchor does not hash to its recorded hash" })
    } finally {
      await receiver.close()
    }
  }, 120_000)

  it("refuses bad days with 400 invalid_request and changes nothing", async () => {
    const { token: admin } = await orgWithToken(fx.gw, ["ability:admin"], "operator")
    const before = await fx.gw.query("SELECT count(*)::text AS n FROM retention_runs")
    for (const days of ["0", "-3", "1.5", "forever"]) {
      const res = await api(fx.gw, admin, "POST", "/api/admin/retention/apply", { days })
      expect(res.status).toBe(400)
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { path: "days" } })
    }
    expect(await fx.gw.query("SELECT count(*)::text AS n FROM retention_runs")).toEqual(before)
  })
})
