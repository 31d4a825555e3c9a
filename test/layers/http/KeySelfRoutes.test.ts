// GET /api/v1/self/{balance,usage,key}: a gateway key reads its OWN organisation (read-only) with no portal token;
// portal tokens, demo keys and missing keys are refused with the gateway's usual codes.
import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

const get = async (path: string, bearer?: string) => {
  const res = await fetch(`${fx.gw.url}${path}`, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

describe("GET /api/v1/self/*", () => {
  it("balance, usage and the key's scopes of the key's own organisation, after a relayed call", async () => {
    const { apiKey, keyPrefix, orgId } = await fundedKey(fx.gw)
    await fundedKey(fx.gw) // another organisation: never visible
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hello" }] })
    const relayed = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(relayed.status).toBe(200)
    const balance = await get("/api/v1/self/balance", apiKey)
    expect(balance.status).toBe(200)
    expect(balance.body).toEqual({ org_id: orgId, balance_micros: Number(await balanceMicros(fx.gw, orgId)), balance_usd: expect.stringMatching(/^9\.\d+$/) })
    const usage = await get("/api/v1/self/usage", apiKey)
    expect(usage.status).toBe(200)
    expect(usage.body.org_id).toBe(orgId)
    expect(usage.body.summary).toEqual([expect.objectContaining({ model: "local-chat", calls: 1 })])
    expect(usage.body.records).toHaveLength(1)
    expect((await get("/api/v1/self/usage?from=nope", apiKey)).body.error.code).toBe("invalid_request")
    const key = await get("/api/v1/self/key", apiKey)
    expect(key).toEqual({ status: 200, body: { key_prefix: keyPrefix, org_id: orgId, tier: expect.any(String), permissions: [], models: null, expires_at: null } })
  })

  it("refuses no key (401 invalid_key), a portal token (401 invalid_key) and a demo key (403 demo_key_restricted)", async () => {
    const { orgId } = await fundedKey(fx.gw)
    const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:admin" }))
    for (const path of ["/api/v1/self/balance", "/api/v1/self/usage", "/api/v1/self/key"]) {
      const none = await get(path)
      expect([none.status, none.body.error.code]).toEqual([401, "invalid_key"])
      const portal = await get(path, token)
      expect([portal.status, portal.body.error.code]).toEqual([401, "invalid_key"])
    }
    const demo = await fetch(`${fx.gw.url}/api/v1/demo/key`, { method: "POST", headers: { "x-forwarded-for": "198.51.100.77" }, body: "{}" })
    expect(demo.status).toBe(201)
    const refused = await get("/api/v1/self/balance", (await demo.json()).api_key)
    expect([refused.status, refused.body.error.code]).toEqual([403, "demo_key_restricted"])
  })
})
