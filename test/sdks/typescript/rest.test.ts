// The SDK's REST capability set against a real gateway: keys, receipts and transparency, webhooks, billing,
// self-service and demo keys; portal operations take the portal token, and a missing one is a clear typed error.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { createLicence, createOrg, createPortalToken, creditWallet } from "../../../layers/AdminOperations.ts"
import { AuthenticationError, ConfigurationError, createJwksCache, GatewayIdentityError, NotFoundError, RelayClient, verifyConsistencyProof } from "../../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"

const fx = useRelayFixture({ WEBHOOK_ALLOW_LOOPBACK: "1", WEBHOOK_RETRY_SCHEDULE_MS: "0,50,50,50,50,50,50" })

let deviceKey: CryptoKeyPair
let orgId: string
let portalToken: string
beforeAll(async () => {
  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-sdk-config-"))
  deviceKey = await generateSigningKeyPair()
  orgId = (await fx.gw.runtime.runPromise(createOrg({ name: "sdk rest" }))).org_id
  await fx.gw.runtime.runPromise(creditWallet({ org_id: orgId, usd: "10" }))
  portalToken = (await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:admin" }))).token
})

const portal = () => new RelayClient({ gatewayUrl: fx.gw.url, portalToken, nameModel: "off", deviceKey })

describe("RelayClient.rest", () => {
  it("keys: create (shown once), list, update, scopes, rotate, revoke; the revoked key is refused", async () => {
    const client = portal()
    const created = await client.rest.keys.create({ name: "backend", permissions: ["completions"] })
    expect(created).toMatchObject({ name: "backend", permissions: ["completions"], api_key: expect.stringMatching(/^svc_/) })
    // Answers are typed from the gateway's OpenAPI document (checked by tsc, which CI runs over the tests).
    expectTypeOf(created.api_key).toEqualTypeOf<string>()
    expectTypeOf(created.permissions).toEqualTypeOf<Array<string>>()
    expect((await client.rest.keys.list()).keys.map((k: { id: string }) => k.id)).toContain(created.id)
    expect(await client.rest.keys.update(created.id, { name: "renamed" })).toMatchObject({ name: "renamed" })
    expect(await client.rest.keys.scopes(created.id)).toEqual({ permissions: ["completions"], models: null })
    const rotated = await client.rest.keys.rotate(created.id)
    expect(rotated.api_key).not.toBe(created.api_key)
    await client.rest.keys.revoke(rotated.id)
    const revoked = new RelayClient({ gatewayUrl: fx.gw.url, apiKey: rotated.api_key, nameModel: "off", deviceKey })
    await expect(revoked.models.list()).rejects.toMatchObject({ constructor: AuthenticationError, code: "key_revoked" })
  })

  it("receipts: a relay call's receipt is listed, fetched by jti, verified offline and online; transparency proof and tree head", async () => {
    const { api_key } = await portal().rest.keys.create({})
    const client = new RelayClient({ gatewayUrl: fx.gw.url, apiKey: api_key, portalToken, nameModel: "off", deviceKey })
    const answer = await client.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: "hello" }] })
    const jti = answer.receipt!.jti as string
    const listed = await client.rest.receipts.list({ limit: 10 })
    expectTypeOf(listed.receipts[0]!.claims.model).toEqualTypeOf<string>()
    expectTypeOf(listed.next_cursor).toEqualTypeOf<string | null>()
    expect(listed.receipts.map((r: { jti: string }) => r.jti)).toContain(jti)
    const v1 = await client.rest.receipts.get(jti)
    expect(v1).toMatchObject({ v: "v1", jti })
    expect((await client.rest.receipts.verify(v1)).valid).toBe(true)
    expect(await client.rest.receipts.verifyOnline(answer.receipt)).toMatchObject({ valid: true, reason: null })
    const tampered = { ...answer.receipt, output_tokens: 999 }
    expect((await client.rest.receipts.verify(tampered)).valid).toBe(false)
    await expect(client.rest.receipts.get("0".repeat(32))).rejects.toBeInstanceOf(NotFoundError)
    expect(await client.rest.receipts.signedTreeHead()).toMatchObject({ v: "transparency-sth-v1" })
    // The leaf is sequenced in the background: ask until the proof exists.
    let proof: Record<string, unknown> | undefined
    for (let i = 0; i < 60 && proof === undefined; i++) {
      proof = await client.rest.receipts.inclusionProof(jti).catch(() => undefined)
      if (proof === undefined) await new Promise((r) => setTimeout(r, 100))
    }
    expect(proof).toMatchObject({ receipt_id: jti, sth: { v: "transparency-sth-v1" } })
    // A head kept now is a prefix of the log after more calls: the consistency proof verifies offline.
    const kept = await client.rest.receipts.signedTreeHead()
    await client.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: "again" }] })
    const consistency = await client.rest.receipts.consistencyProof(kept.tree_size)
    expect(consistency).toMatchObject({ first: kept.tree_size, sth: { v: "transparency-sth-v1" } })
    const jwks = createJwksCache({ gatewayUrl: fx.gw.url })
    expect(await verifyConsistencyProof(consistency, kept, { jwks })).toMatchObject({ valid: true, reason: null })
  })

  it("webhooks: an endpoint gets a test delivery, its log shows it, a replay is queued, the secret rotates", async () => {
    const received: Array<string> = []
    const hook = createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        received.push(String(req.headers["x-service-webhook-event-id"]))
        res.end("ok")
      })
    })
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r))
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`
    try {
      const client = portal()
      const endpoint = await client.rest.webhooks.endpoints.create({ url, events: ["key.created"] })
      expect(endpoint.secret).toBeTruthy()
      expect((await client.rest.webhooks.endpoints.list()).endpoints.map((e: { id: number }) => e.id)).toContain(endpoint.id)
      await client.rest.webhooks.endpoints.test(endpoint.id)
      let deliveries: Array<{ id: number; status: string }> = []
      for (let i = 0; i < 60 && !deliveries.some((d) => d.status === "delivered"); i++) {
        deliveries = (await client.rest.webhooks.deliveries.list()).deliveries
        await new Promise((r) => setTimeout(r, 100))
      }
      const delivered = deliveries.find((d) => d.status === "delivered")!
      expect(delivered).toBeDefined()
      expect(await client.rest.webhooks.deliveries.get(delivered.id)).toMatchObject({ id: delivered.id })
      expect(await client.rest.webhooks.deliveries.replay(delivered.id)).toBeTruthy()
      const rotated = await client.rest.webhooks.endpoints.rotateSecret(endpoint.id)
      expect(rotated.secret).not.toBe(endpoint.secret)
      expect(received.length).toBeGreaterThanOrEqual(1)
    } finally {
      hook.close()
    }
  })

  it("billing: balance, a development top-up completed, a licence redeemed, the ledger", async () => {
    const client = portal()
    const before = (await client.rest.billing.balance()).balance_micros as number
    const checkout = await client.rest.billing.topUp({ amount_usd: "5" })
    await client.rest.billing.completeDevCheckout(checkout.checkout_id)
    const { code } = await fx.gw.runtime.runPromise(createLicence({ usd: "3" }))
    await client.rest.billing.redeemLicence({ code })
    expect((await client.rest.billing.balance()).balance_micros).toBe(before + 8_000_000)
    const ledger = await client.rest.billing.ledger()
    expect(JSON.stringify(ledger)).toContain("licence_credit")
  })

  it("byok: stores a provider key (last4 only back), lists it, replaces it, deletes it; the catalogue lists the BYOK providers without a key", async () => {
    const client = portal()
    expect(await client.rest.byok.list()).toEqual({ credentials: [] })
    expect(await client.rest.byok.put("openai", { api_key: "sk-sdk-test-0123456789-Zz99" })).toMatchObject({ provider: "openai", last4: "Zz99" })
    expect(await client.rest.byok.put("openai", { api_key: "sk-sdk-test-0123456789-Yy88" })).toMatchObject({ provider: "openai", last4: "Yy88" })
    const listed = await client.rest.byok.list()
    expect(listed.credentials.map((c) => [c.provider, c.last4])).toEqual([["openai", "Yy88"]])
    expect(JSON.stringify(listed)).not.toContain("sk-sdk-test")
    expect(await client.rest.byok.delete("openai")).toEqual({})
    expect(await client.rest.byok.list()).toEqual({ credentials: [] })
    await expect(client.rest.byok.delete("openai")).rejects.toBeInstanceOf(NotFoundError)
    const catalogue = await client.rest.catalogue({ include: "unavailable" })
    expect(catalogue.data.filter((m) => m.byok).map((m) => m.provider)).toContain("openai")
  })

  it("sends no portal token or key to a URL that is not a gateway (identity probe first)", async () => {
    fx.provider.reset()
    const notGateway = new RelayClient({ gatewayUrl: fx.provider.url, portalToken, apiKey: `svc_${"a".repeat(52)}`, nameModel: "off", deviceKey })
    await expect(notGateway.rest.keys.list()).rejects.toMatchObject({ constructor: GatewayIdentityError, code: "gateway_identity_failed" })
    await expect(notGateway.rest.receipts.countersign({})).rejects.toBeInstanceOf(GatewayIdentityError)
    const sent = fx.provider.received.map((r) => String(r.headers.authorization ?? ""))
    expect(sent.filter((h) => h.includes(portalToken) || h.includes("svc_"))).toEqual([])
  })

  it("self-service and demo keys need no credentials; portal operations without a portal token are a ConfigurationError", async () => {
    const anonymous = new RelayClient({ gatewayUrl: fx.gw.url, nameModel: "off", deviceKey })
    expect(await anonymous.rest.selfServiceKey()).toMatchObject({ tier: "free", api_key: expect.stringMatching(/^svc_/) })
    expect(await anonymous.rest.demoKey()).toMatchObject({ tier: "demo", balance_usd: "2.00" })
    await expect(anonymous.rest.keys.list()).rejects.toBeInstanceOf(ConfigurationError)
    await expect(anonymous.models.list()).rejects.toMatchObject({ constructor: ConfigurationError, message: expect.stringContaining("gateway key") })
  })
})
