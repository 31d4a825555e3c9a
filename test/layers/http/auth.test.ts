import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../../programs/fake-provider.ts"
import { createPortalToken, revokeKey } from "../../../layers/AdminOperations.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fundedKey } from "../../support/tenant.ts"

let provider: FakeProvider
let gw: TestGateway
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
})
afterAll(async () => {
  await gw.close()
  await provider.close()
})
beforeEach(() => provider.reset())

const chat = async (authorization: string | undefined) => {
  const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] })
  return fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { ...(authorization ? { authorization } : {}), ...(await attestedHeaders("chat.completions", body)) },
    body
  })
}

describe("auth matrix on relay routes", () => {
  it.each([
    ["no Authorization header", undefined, "invalid_key"],
    ["a malformed key", "Bearer svc_tooshort", "invalid_key"],
    ["a non-bearer scheme", "Basic dXNlcjpwYXNz", "invalid_key"],
    ["an unknown well-formed key", `Bearer svc_${"a".repeat(52)}`, "invalid_key"]
  ])("%s -> 401 %s, nothing forwarded", async (_l, authorization, code) => {
    const res = await chat(authorization)
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe(code)
    expect(res.headers.get("x-service-receipt-failed")).toBeNull()
    expect(provider.received).toHaveLength(0)
  })

  it("a revoked key -> 401 key_revoked", async () => {
    const { apiKey, keyPrefix } = await fundedKey(gw)
    expect((await chat(`Bearer ${apiKey}`)).status).toBe(200)
    await gw.runtime.runPromise(revokeKey({ key_prefix: keyPrefix }, "test"))
    const res = await chat(`Bearer ${apiKey}`)
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe("key_revoked")
    expect(provider.received).toHaveLength(1)
    const events = await gw.query<{ event: string }>("SELECT event FROM outbox_events WHERE data->>'key_prefix' = $1 ORDER BY created_at", keyPrefix)
    expect(events.map((e) => e.event)).toEqual(["key.created", "key.revoked"])
  })

  it("a portal token on a relay route -> 401, and a gateway key on a portal route -> 401", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const { token } = await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:billing.read" }))
    const relay = await chat(`Bearer ${token}`)
    expect(relay.status).toBe(401)
    expect((await relay.json()).error.code).toBe("invalid_key")
    const portal = await fetch(`${gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${apiKey}` } })
    expect(portal.status).toBe(401)
    expect((await portal.json()).error.code).toBe("portal_auth_required")
    const ok = await fetch(`${gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${token}` } })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ balance_micros: 10_000_000, balance_usd: "10.000000" })
    expect(provider.received).toHaveLength(0)
  })

  it("a key whose permissions lack the route's scope -> 403 insufficient_scope with required and granted", async () => {
    const { apiKey, keyPrefix } = await fundedKey(gw)
    await gw.query(`UPDATE api_keys SET permissions = '["messages"]'::jsonb WHERE key_prefix = $1`, keyPrefix)
    const res = await chat(`Bearer ${apiKey}`)
    expect(res.status).toBe(403)
    expect((await res.json()).error).toMatchObject({
      type: "permission_error",
      code: "insufficient_scope",
      required: ["completions"],
      granted: ["messages"]
    })
    expect(provider.received).toHaveLength(0)
  })

  it("a portal token without the route's ability -> 403 insufficient_ability", async () => {
    const { orgId } = await fundedKey(gw)
    const { token } = await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:keys.read" }))
    const res = await fetch(`${gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(403)
    expect((await res.json()).error).toMatchObject({ code: "insufficient_ability", required: ["ability:billing.read"] })
  })
})
