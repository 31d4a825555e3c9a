import { describe, expect, it } from "vitest"
import { checkLedger } from "../../layers/AdminOperations.ts"
import { attestedHeaders } from "../support/engine.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { fundedKey } from "../support/tenant.ts"

const fx = useRelayFixture()

const relayChat = async (apiKey: string) => {
  const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hello" }] })
  const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
    body
  })
  expect(res.status).toBe(200)
  await res.json()
  return res.headers.get("x-service-receipt-v2-jti")!
}

const plantUsage = (orgId: string, id: string, partial: boolean) =>
  fx.gw.query(
    `INSERT INTO usage_records (id, request_id, gateway_request_id, org_id, key_id, provider, model, capability, key_mode,
      input_tokens, output_tokens, partial, upstream_cost_micros, billed_micros, markup_micros, trace_id, started_at)
     VALUES ($1, $1, $1, $2, 'key_x', 'local', 'local-chat', 'chat.completions', 'pooled', 3, 4, $3, 1, 7, 0, 't', now())`,
    id,
    orgId,
    partial
  )

describe("ledger check: metering and sealing agree", () => {
  it("is clean after sealed calls, and lists a billed call without a receipt and receipts without usage", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    await relayChat(apiKey)
    const orphaned = await relayChat(apiKey)
    const clean = await fx.gw.runtime.runPromise(checkLedger)
    expect(clean).toEqual({
      ok: true,
      mismatches: [],
      usage_without_receipt: { count: 0, records: [] },
      receipts_without_usage: { count: 0, receipts: [] }
    })

    // A receipt whose usage record is gone (both its v2 and its v1), a completed billed call with no receipt, and a
    // partial (cut stream) call, which is metered but never sealed and so is not a defect.
    await fx.gw.query("DELETE FROM usage_records WHERE receipt_jti = $1", orphaned)
    await plantUsage(orgId, "use_unsealed", false)
    await plantUsage(orgId, "use_partial", true)
    const report = await fx.gw.runtime.runPromise(checkLedger)
    expect(report.ok).toBe(false)
    expect(report.mismatches).toEqual([])
    expect(report.usage_without_receipt).toEqual({
      count: 1,
      records: [expect.objectContaining({ usage_id: "use_unsealed", org_id: orgId, key_id: "key_x", billed_micros: 7 })]
    })
    expect(report.receipts_without_usage.count).toBe(2)
    expect(report.receipts_without_usage.receipts.map((r: { jti: string }) => r.jti)).toEqual([orphaned, orphaned])
    expect(report.receipts_without_usage.receipts.map((r: { chain_id: string }) => r.chain_id.split("-")[0]).sort()).toEqual(["receipt", "tenant"])
  })
})
