import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { billCall } from "../../../src/billing/pricing.ts"
import { getProvider } from "../../../src/providers/catalogue.ts"
import { decideRoute } from "../../../src/routing/costRouter.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fetchJwks, independentlyVerify } from "../../support/receipts.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: "Hello <NAME_1>" }], ...extra })

const relayChat = async (apiKey: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${fx.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)), ...headers },
    body
  })

const receiptOf = (res: Response) => JSON.parse(Buffer.from(res.headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))

const usageOf = async (orgId: string) =>
  (await fx.gw.query<Record<string, unknown>>(
    "SELECT provider, model, key_mode, input_tokens, output_tokens, billed_micros::text AS billed FROM usage_records WHERE org_id = $1",
    orgId
  ))

const expectedBill = (slug: string, u: Record<string, unknown>) => {
  const model = getProvider(slug)!.models.find((m) => m.id === "local-chat")!
  return billCall({
    inputTokens: Number(u.input_tokens),
    outputTokens: Number(u.output_tokens),
    inputUsdPerMTok: model.inputUsdPerMTok,
    outputUsdPerMTok: model.outputUsdPerMTok,
    keyMode: u.key_mode as "pooled" | "byok"
  }).billedMicros
}

describe("content-blind cost routing (X-Service-Routing: cost)", () => {
  it("moves the call to the cheaper provider of the same model: body unchanged, receipt and header carry the decision, billed at the cheaper price", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = chatBody()
    const before = await balanceMicros(fx.gw, orgId)
    const res = await relayChat(apiKey, body, { "x-service-routing": "cost" })
    expect(res.status).toBe(200)
    await res.json()

    // the body reaches the provider byte for byte (its hash is the attested egress hash)
    expect(fx.provider.received).toHaveLength(1)
    expect(fx.provider.received[0].body.equals(Buffer.from(body))).toBe(true)

    const local = getProvider("local")!.models.find((m) => m.id === "local-chat")!
    const economy = getProvider("local-economy")!.models.find((m) => m.id === "local-chat")!
    const expectedDecision = decideRoute({
      strategy: "cost",
      model: "local-chat",
      current: { provider: "local", ...local, keyMode: "pooled", available: true },
      candidates: [{ provider: "local-economy", ...economy, keyMode: "pooled", available: true }],
      bodyBytes: Buffer.byteLength(body),
      maxOutputTokens: 64
    }).decision
    expect(expectedDecision.to).toBe("local-economy")

    const header = JSON.parse(res.headers.get("x-service-routing-decision")!)
    expect(header).toEqual(expectedDecision)
    expect(header.savings_pct).toBeGreaterThan(0)

    const receipt = receiptOf(res)
    expect(receipt.provider).toBe("local-economy")
    expect(receipt.model).toBe("local-chat")
    expect(receipt.routing_decision).toEqual({ ...expectedDecision, classifier: "metadata-v1", strategy: "cost" })
    expect(await independentlyVerify(receipt, await fetchJwks(fx.gw.url))).toBe(true)

    const usage = await usageOf(orgId)
    expect(usage).toHaveLength(1)
    expect(usage[0]).toMatchObject({ provider: "local-economy", model: "local-chat", key_mode: "pooled" })
    const billed = BigInt(String(usage[0].billed))
    expect(billed).toBe(expectedBill("local-economy", usage[0]))
    expect(billed).toBeLessThan(expectedBill("local", usage[0]))
    expect(await balanceMicros(fx.gw, orgId)).toBe(before - billed)

    // the v1 receipt of the same call records the decision too
    const v1 = await fx.gw.query<{ envelope: unknown }>("SELECT envelope FROM receipts_v1 WHERE jti = $1", receipt.jti)
    expect(v1).toHaveLength(1)
    const env = (typeof v1[0].envelope === "string" ? JSON.parse(v1[0].envelope) : v1[0].envelope) as { claims: Record<string, unknown> }
    expect(env.claims.provider).toBe("local-economy")
    expect(env.claims.routing_decision).toEqual({ from: "local", to: "local-economy", chosen_model: "local-chat", strategy: "cost", classifier: "metadata-v1" })
  })

  it("changes nothing without the header: the catalogue's first provider, no decision in header or receipt", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, chatBody())
    expect(res.status).toBe(200)
    await res.json()
    expect(res.headers.get("x-service-routing-decision")).toBeNull()
    const receipt = receiptOf(res)
    expect(receipt.provider).toBe("local")
    expect(receipt).not.toHaveProperty("routing_decision")
    const usage = await usageOf(orgId)
    expect(usage[0]).toMatchObject({ provider: "local", key_mode: "pooled" })
    expect(BigInt(String(usage[0].billed))).toBe(expectedBill("local", usage[0]))
  })

  it("treats X-Service-Routing: off as no routing", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, chatBody(), { "x-service-routing": "off" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-service-routing-decision")).toBeNull()
    expect(receiptOf(res).provider).toBe("local")
  })

  it("does not move a call that pinned its provider with provider/model", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, chatBody({ model: "local/local-chat" }), { "x-service-routing": "cost" })
    expect(res.status).toBe(200)
    expect(res.headers.get("x-service-routing-decision")).toBeNull()
    expect((await usageOf(orgId))[0]).toMatchObject({ provider: "local" })
  })

  it("answers 400 invalid_request for an unknown strategy and forwards nothing", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const res = await relayChat(apiKey, chatBody(), { "x-service-routing": "quality" })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ code: "invalid_request", details: { path: "x-service-routing" } })
    expect(fx.provider.received).toHaveLength(0)
    expect(await usageOf(orgId)).toHaveLength(0)
  })

  it("routes with the organisation's keys: a BYOK credential on the cheaper provider is used there (byok, 5%)", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const writer = (await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: ["ability:byok.write"] }))).token as string
    const byokKey = "sk-economy-byok-key-0001"
    const put = await fetch(`${fx.gw.url}/api/v1/byok/local-economy`, {
      method: "PUT",
      headers: { authorization: `Bearer ${writer}`, "content-type": "application/json" },
      body: JSON.stringify({ api_key: byokKey })
    })
    expect(put.status).toBe(200)
    const res = await relayChat(apiKey, chatBody(), { "x-service-routing": "cost" })
    expect(res.status).toBe(200)
    expect(fx.provider.received[0].headers["authorization"]).toBe(`Bearer ${byokKey}`)
    const usage = await usageOf(orgId)
    expect(usage[0]).toMatchObject({ provider: "local-economy", key_mode: "byok" })
    expect(BigInt(String(usage[0].billed))).toBe(expectedBill("local-economy", usage[0]))
  })

  it("routes a streamed call too: the receipt-v2 trailer carries the decision", async () => {
    const { apiKey, orgId } = await fundedKey(fx.gw)
    const body = chatBody({ stream: true, stream_options: { include_usage: true } })
    const res = await relayChat(apiKey, body, { "x-service-routing": "cost" })
    expect(res.status).toBe(200)
    expect(JSON.parse(res.headers.get("x-service-routing-decision")!)).toMatchObject({ from: "local", to: "local-economy" })
    const text = await res.text()
    const trailer = text.slice(text.indexOf("event: receipt-v2\ndata: ") + "event: receipt-v2\ndata: ".length).trim()
    const receipt = JSON.parse(trailer)
    expect(receipt.provider).toBe("local-economy")
    expect(receipt.routing_decision).toMatchObject({ from: "local", to: "local-economy", strategy: "cost", classifier: "metadata-v1" })
    expect(receipt.routing_decision.savings_pct).toBeGreaterThan(0)
    expect((await usageOf(orgId))[0]).toMatchObject({ provider: "local-economy" })
  })
})
