import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createLicence, createPortalToken } from "../../../layers/AdminOperations.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

let gw: TestGateway
let token: string
let orgId: string
beforeAll(async () => {
  gw = await startTestGateway()
  ;({ orgId } = await fundedKey(gw, "0"))
  ;({ token } = await gw.runtime.runPromise(
    createPortalToken({ org_id: orgId, abilities: "ability:keys.write,ability:keys.read,ability:billing.write" })
  ))
})
afterAll(() => gw.close())

const call = (method: string, path: string, body: unknown, key?: string) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key })
    },
    body: JSON.stringify(body)
  })

describe("Idempotency-Key on the portal routes of the coverage table", () => {
  it("POST /api/keys: a retry returns the same key once minted; another body conflicts", async () => {
    const key = crypto.randomUUID()
    const first = await call("POST", "/api/keys", { name: "ci" }, key)
    expect(first.status).toBe(201)
    const minted = await first.json()
    const again = await call("POST", "/api/keys", { name: "ci" }, key)
    expect(again.status).toBe(201)
    expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
    expect((await again.json()).api_key).toBe(minted.api_key)
    expect(await gw.query("SELECT 1 FROM api_keys WHERE name = 'ci' AND org_id = $1", orgId)).toHaveLength(1)
    const other = await call("POST", "/api/keys", { name: "other" }, key)
    expect(other.status).toBe(409)
    expect(await other.json()).toEqual({
      error: { code: "idempotency_key_conflict", message: "This Idempotency-Key was used with a different request body in the last 24 hours." }
    })
    const tooLong = await call("POST", "/api/keys", { name: "ci" }, "k".repeat(129))
    expect(tooLong.status).toBe(400)
    expect(await tooLong.json()).toEqual({
      error: { code: "invalid_idempotency_key", message: "Idempotency-Key must be 1 to 128 printable characters (a UUID v4 is recommended)." }
    })
    expect(await gw.query("SELECT 1 FROM api_keys WHERE name = 'ci' AND org_id = $1", orgId)).toHaveLength(1)
  })

  it("PATCH /api/keys/{id} and POST /api/keys/{id}/rotate: one change per key; the key is bound to the path", async () => {
    const created = await (await call("POST", "/api/keys", { name: "to-rotate" })).json()
    const patchKey = crypto.randomUUID()
    expect((await call("PATCH", `/api/keys/${created.id}`, { name: "renamed" }, patchKey)).status).toBe(200)
    const replay = await call("PATCH", `/api/keys/${created.id}`, { name: "renamed" }, patchKey)
    expect(replay.headers.get("x-service-idempotent-replay")).toBe("true")

    const rotateKey = crypto.randomUUID()
    const rotated = await call("POST", `/api/keys/${created.id}/rotate`, {}, rotateKey)
    expect(rotated.status).toBe(201)
    const newKey = (await rotated.json()).api_key
    const retried = await call("POST", `/api/keys/${created.id}/rotate`, {}, rotateKey)
    expect(retried.status).toBe(201)
    expect((await retried.json()).api_key).toBe(newKey)
    const family = await gw.query<{ status: string }>(
      "SELECT status FROM api_keys WHERE org_id = $1 AND (id = $2 OR name = 'renamed') ORDER BY created_at",
      orgId,
      created.id
    )
    expect(family.map((k) => k.status)).toEqual(["rotated", "active"])
  })

  it("top-up aliases share one operation: a retry through another alias returns the same checkout", async () => {
    const key = crypto.randomUUID()
    const first = await call("POST", "/api/v1/billing/topup", { amount_usd: "10.00" }, key)
    expect(first.status).toBe(201)
    const checkout = await first.json()
    const viaAlias = await call("POST", "/api/billing/checkout/topup", { amount_usd: "10.00" }, key)
    expect(viaAlias.status).toBe(201)
    expect((await viaAlias.json()).checkout_id).toBe(checkout.checkout_id)
    expect(await gw.query("SELECT 1 FROM payments WHERE org_id = $1", orgId)).toHaveLength(1)
  })

  it("POST /api/billing/redeem-license: a retry replays the redemption and credits once", async () => {
    const { code } = await gw.runtime.runPromise(createLicence({ usd: "3" })) as { code: string }
    const before = await balanceMicros(gw, orgId)
    const key = crypto.randomUUID()
    const first = await call("POST", "/api/billing/redeem-license", { code }, key)
    expect(first.status).toBe(200)
    const again = await call("POST", "/api/billing/redeem-license", { code }, key)
    expect(again.status).toBe(200)
    expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(await balanceMicros(gw, orgId)).toBe(before + 3_000_000n)
  })
})
