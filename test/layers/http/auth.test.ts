import { describe, expect, it } from "vitest"
import { createPortalToken, revokeKey } from "../../../layers/AdminOperations.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

const chat = async (authorization: string | undefined) => {
  const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi" }] })
  return fetch(`${fx.gw.url}/api/v1/chat/completions`, {
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
    expect(fx.provider.received).toHaveLength(0)
  })

  it("a revoked key -> 401 key_revoked", async () => {
    const { apiKey, keyPrefix } = await fundedKey(fx.gw)
    expect((await chat(`Bearer ${apiKey}`)).status).toBe(200)
    await fx.gw.runtime.runPromise(revokeKey({ key_prefix: keyPrefix }, "test"))
    const res = await chat(`Bearer ${apiKey}`)
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe("key_revoked")
    expect(fx.provider.received).toHaveLength(1)
    const events = await fx.gw.query<{ event: string }>("SELECT event FROM outbox_events WHERE data->>'key_prefix' = $1 ORDER BY created_at", keyPrefix)
    expect(events.map((e) => e.event)).toEqual(["key.created", "key.revoked"])
  })

  it("a portal token on a relay route -> 401, and a gateway key on a portal route -> 401", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:billing.read" }))
    const relay = await chat(`Bearer ${token}`)
    expect(relay.status).toBe(401)
    expect((await relay.json()).error.code).toBe("invalid_key")
    const portal = await fetch(`${fx.gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${apiKey}` } })
    expect(portal.status).toBe(401)
    expect((await portal.json()).error.code).toBe("portal_auth_required")
    const ok = await fetch(`${fx.gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${token}` } })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ balance_micros: 10_000_000, balance_usd: "10.000000" })
    expect(fx.provider.received).toHaveLength(0)
  })

  it("each key refusal answers its whole envelope: unknown, revoked, expired", async () => {
    const envelope = async (authorization: string) => {
      const res = await chat(authorization)
      return { status: res.status, body: await res.json() }
    }
    expect(await envelope(`Bearer svc_${"b".repeat(52)}`)).toEqual({
      status: 401,
      body: { error: { code: "invalid_key", message: "The API key is missing, malformed or unknown." } }
    })
    const revoked = await fundedKey(fx.gw)
    await fx.gw.runtime.runPromise(revokeKey({ key_prefix: revoked.keyPrefix }, "test"))
    expect(await envelope(`Bearer ${revoked.apiKey}`)).toEqual({
      status: 401,
      body: { error: { code: "key_revoked", message: "This API key has been revoked." } }
    })
    const expired = await fundedKey(fx.gw)
    await fx.gw.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE key_prefix = $1", expired.keyPrefix)
    expect(await envelope(`Bearer ${expired.apiKey}`)).toEqual({
      status: 401,
      body: { error: { code: "key_expired", message: "This API key has expired (demo keys last 24 hours). Get a new one." } }
    })
    expect(fx.provider.received).toHaveLength(0)
  })

  it("an unknown or malformed portal token -> 401 portal_auth_required on portal routes, auth_required on receipt reads", async () => {
    for (const token of [`spt_${"a".repeat(52)}`, "spt_tooshort"]) {
      const portal = await fetch(`${fx.gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${token}` } })
      expect(portal.status).toBe(401)
      expect(await portal.json()).toEqual({
        error: { code: "portal_auth_required", message: "This route needs a portal session or portal token (spt_...)." }
      })
      const receipts = await fetch(`${fx.gw.url}/api/v1/receipts`, { headers: { authorization: `Bearer ${token}` } })
      expect(receipts.status).toBe(401)
      expect(await receipts.json()).toEqual({
        error: { code: "auth_required", message: "This route needs a portal session or portal token (spt_...)." }
      })
    }
    expect(fx.provider.received).toHaveLength(0)
  })

  it("a key whose permissions lack the route's scope -> 403 insufficient_scope with required and granted", async () => {
    const { apiKey, keyPrefix } = await fundedKey(fx.gw)
    await fx.gw.query(`UPDATE api_keys SET permissions = '["messages"]'::jsonb WHERE key_prefix = $1`, keyPrefix)
    const res = await chat(`Bearer ${apiKey}`)
    expect(res.status).toBe(403)
    expect((await res.json()).error).toMatchObject({
      type: "permission_error",
      code: "insufficient_scope",
      required: ["completions"],
      granted: ["messages"]
    })
    expect(fx.provider.received).toHaveLength(0)
  })

  it("a portal token without the route's ability -> 403 insufficient_ability", async () => {
    const { orgId } = await fundedKey(fx.gw)
    const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:keys.read" }))
    const res = await fetch(`${fx.gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(403)
    expect((await res.json()).error).toMatchObject({ code: "insufficient_ability", required: ["ability:billing.read"] })
  })
})
