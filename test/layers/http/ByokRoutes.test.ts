import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { billCall } from "../../../src/billing/pricing.ts"
import { findModel } from "../../../src/providers/catalogue.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

const portalToken = async (orgId: string, abilities: Array<string>) =>
  (await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities }))).token as string

const call = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await fetch(`${fx.gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text), headers: res.headers }
}

const relayChat = async (apiKey: string) => {
  const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Hello <NAME_1>" }] })
  const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
    body
  })
  return { status: res.status, json: await res.json() }
}

/** A funded organisation with a gateway key and a portal token that may write BYOK credentials. */
const tenant = async () => {
  const key = await fundedKey(fx.gw)
  return { ...key, writer: await portalToken(key.orgId, ["ability:byok.write"]) }
}

const BYOK_KEY = "sk-byok-test-0123456789abcdefWXYZ"

describe("BYOK credentials: PUT / GET / DELETE /api/v1/byok", () => {
  it("stores a key encrypted, shows only its last four characters, and never stores the plaintext", async () => {
    const { orgId, writer } = await tenant()
    const put = await call("PUT", "/api/v1/byok/openai", writer, { api_key: BYOK_KEY })
    expect(put.status).toBe(200)
    expect(put.json).toEqual({ provider: "openai", last4: "WXYZ", created_at: expect.any(String) })
    expect(Number.isNaN(Date.parse(put.json.created_at))).toBe(false)

    const list = await call("GET", "/api/v1/byok", writer)
    expect(list.status).toBe(200)
    expect(list.json).toEqual({ credentials: [{ provider: "openai", last4: "WXYZ", created_at: put.json.created_at }] })
    expect(JSON.stringify(list.json)).not.toContain(BYOK_KEY.slice(0, -4))

    const rows = await fx.gw.query<Record<string, unknown>>("SELECT * FROM byok_credentials WHERE org_id = $1", orgId)
    expect(rows).toHaveLength(1)
    const stored = JSON.stringify(rows[0])
    expect(stored).not.toContain(BYOK_KEY)
    expect(stored).not.toContain(BYOK_KEY.slice(0, 12))
    expect(String(rows[0].ciphertext)).toMatch(/^aead1\./)
  })

  it("lets ability:keys.read list but not write; refuses other abilities and gateway keys", async () => {
    const { orgId, apiKey, writer } = await tenant()
    await call("PUT", "/api/v1/byok/mistral", writer, { api_key: BYOK_KEY })
    const reader = await portalToken(orgId, ["ability:keys.read"])
    expect((await call("GET", "/api/v1/byok", reader)).json.credentials.map((c: { provider: string }) => c.provider)).toEqual(["mistral"])
    const write = await call("PUT", "/api/v1/byok/mistral", reader, { api_key: BYOK_KEY })
    expect(write.status).toBe(403)
    expect(write.json.error).toMatchObject({ code: "insufficient_ability", required: ["ability:byok.write"] })
    expect((await call("DELETE", "/api/v1/byok/mistral", reader)).status).toBe(403)

    const billing = await portalToken(orgId, ["ability:billing.read"])
    const read = await call("GET", "/api/v1/byok", billing)
    expect(read.status).toBe(403)
    expect(read.json.error.code).toBe("insufficient_ability")

    for (const [method, path] of [["GET", "/api/v1/byok"], ["PUT", "/api/v1/byok/mistral"], ["DELETE", "/api/v1/byok/mistral"]]) {
      const res = await call(method, path, apiKey, method === "PUT" ? { api_key: BYOK_KEY } : undefined)
      expect(res.status, `${method} ${path}`).toBe(401)
      expect(res.json.error.code).toBe("portal_auth_required")
    }
    expect((await fetch(`${fx.gw.url}/api/v1/byok`)).status).toBe(401)
  })

  it("keeps organisations apart: another organisation sees none of the credentials", async () => {
    const a = await tenant()
    const b = await tenant()
    await call("PUT", "/api/v1/byok/groq", a.writer, { api_key: BYOK_KEY })
    expect((await call("GET", "/api/v1/byok", b.writer)).json).toEqual({ credentials: [] })
    expect((await call("DELETE", "/api/v1/byok/groq", b.writer)).status).toBe(404)
    expect((await call("GET", "/api/v1/byok", a.writer)).json.credentials).toHaveLength(1)
  })

  it.each([
    ["an empty key", { api_key: "" }, "api_key"],
    ["a key of spaces", { api_key: "        " }, "api_key"],
    ["a too short key", { api_key: "abc1234" }, "api_key"],
    ["an over-long key", { api_key: "k".repeat(4097) }, "api_key"],
    ["a key with an inner space", { api_key: "sk-abc def-123456" }, "api_key"],
    ["a key that is not a string", { api_key: 12345678 }, "api_key"],
    ["a missing key", {}, "api_key"],
    ["an unknown field", { api_key: BYOK_KEY, region: "eu" }, "region"]
  ])("answers 400 invalid_request for %s", async (_label, body, path) => {
    const { orgId, writer } = await tenant()
    const res = await call("PUT", "/api/v1/byok/openai", writer, body)
    expect(res.status).toBe(400)
    expect(res.json.error).toMatchObject({ code: "invalid_request", details: { path } })
    expect(await fx.gw.query("SELECT 1 FROM byok_credentials WHERE org_id = $1", orgId)).toHaveLength(0)
  })

  it("answers 404 not_found for a provider outside the catalogue, and for deleting a credential that does not exist", async () => {
    const { writer } = await tenant()
    const put = await call("PUT", "/api/v1/byok/not-a-provider", writer, { api_key: BYOK_KEY })
    expect(put.status).toBe(404)
    expect(put.json.error.code).toBe("not_found")
    expect((await call("DELETE", "/api/v1/byok/not-a-provider", writer)).json.error.code).toBe("not_found")
    expect((await call("DELETE", "/api/v1/byok/openai", writer)).status).toBe(404)
  })

  it("accepts a key with a trailing newline (pasted) and stores it trimmed", async () => {
    const { writer } = await tenant()
    const res = await call("PUT", "/api/v1/byok/openai", writer, { api_key: `${BYOK_KEY}\n` })
    expect(res.status).toBe(200)
    expect(res.json.last4).toBe("WXYZ")
  })
})

describe("relaying with a BYOK credential", () => {
  it("uses the organisation's own key upstream, bills 5% markup, and returns to the pooled key after DELETE", async () => {
    const { apiKey, orgId, writer } = await tenant()
    expect((await call("PUT", "/api/v1/byok/local", writer, { api_key: BYOK_KEY })).status).toBe(200)

    const before = await balanceMicros(fx.gw, orgId)
    const first = await relayChat(apiKey)
    expect(first.status).toBe(200)
    expect(fx.provider.received).toHaveLength(1)
    expect(fx.provider.received[0].headers["authorization"]).toBe(`Bearer ${BYOK_KEY}`)

    const usage = await fx.gw.query<Record<string, unknown>>(
      "SELECT key_mode, input_tokens, output_tokens, billed_micros::text AS billed, upstream_cost_micros::text AS cost FROM usage_records WHERE org_id = $1",
      orgId
    )
    expect(usage).toHaveLength(1)
    expect(usage[0].key_mode).toBe("byok")
    const prices = findModel("local-chat")!.model
    const expected = billCall({
      inputTokens: Number(usage[0].input_tokens),
      outputTokens: Number(usage[0].output_tokens),
      inputUsdPerMTok: prices.inputUsdPerMTok,
      outputUsdPerMTok: prices.outputUsdPerMTok,
      keyMode: "byok"
    })
    expect(BigInt(String(usage[0].billed))).toBe(expected.billedMicros)
    expect(BigInt(String(usage[0].cost))).toBe(expected.upstreamCostMicros)
    expect(await balanceMicros(fx.gw, orgId)).toBe(before - expected.billedMicros)

    expect((await call("DELETE", "/api/v1/byok/local", writer)).status).toBe(204)
    expect((await call("GET", "/api/v1/byok", writer)).json).toEqual({ credentials: [] })
    const second = await relayChat(apiKey)
    expect(second.status).toBe(200)
    expect(fx.provider.received[1].headers["authorization"]).toBe("Bearer local")
    const modes = await fx.gw.query<{ key_mode: string }>("SELECT key_mode FROM usage_records WHERE org_id = $1 ORDER BY started_at", orgId)
    expect(modes.map((r) => r.key_mode).sort()).toEqual(["byok", "pooled"])
  })

  it("does not lend an organisation's credential to another organisation", async () => {
    const a = await tenant()
    const b = await tenant()
    await call("PUT", "/api/v1/byok/local", a.writer, { api_key: BYOK_KEY })
    expect((await relayChat(b.apiKey)).status).toBe(200)
    expect(fx.provider.received[0].headers["authorization"]).toBe("Bearer local")
  })

  it("replaces a credential: the new key is used at once on this node", async () => {
    const { apiKey, writer } = await tenant()
    await call("PUT", "/api/v1/byok/local", writer, { api_key: BYOK_KEY })
    expect((await relayChat(apiKey)).status).toBe(200)
    const replacement = "sk-byok-replacement-987654321"
    expect((await call("PUT", "/api/v1/byok/local", writer, { api_key: replacement })).json.last4).toBe("4321")
    expect((await relayChat(apiKey)).status).toBe(200)
    expect(fx.provider.received.map((r) => r.headers["authorization"])).toEqual([`Bearer ${BYOK_KEY}`, `Bearer ${replacement}`])
  })

  it("answers 400 provider_not_configured for a BYOK-only provider without a credential, forwarding nothing", async () => {
    const { apiKey } = await tenant()
    const body = JSON.stringify({ model: "deepseek-chat", messages: [{ role: "user", content: "x" }] })
    const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.code).toBe("provider_not_configured")
    expect(fx.provider.received).toHaveLength(0)
  })
})
