import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

let gw: TestGateway
beforeAll(async () => {
  // neither Stripe nor the explicit development provider: a production gateway without payments set up
  gw = await startTestGateway({ PAYMENTS_PROVIDER: "" })
})
afterAll(() => gw.close())

describe("payments without a configured provider", () => {
  it("refuses top-ups with 503 payments_not_configured and credits nothing", async () => {
    const { orgId } = await fundedKey(gw, "0")
    const { token } = await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:billing.write" }))
    const res = await fetch(`${gw.url}/api/v1/billing/topup`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ amount_usd: "10.00" })
    })
    expect(res.status).toBe(503)
    expect((await res.json()).error.code).toBe("payments_not_configured")
    expect(await balanceMicros(gw, orgId)).toBe(0n)
    expect(await gw.query("SELECT 1 FROM ledger_entries WHERE org_id = $1", orgId)).toHaveLength(0)
  })
})
