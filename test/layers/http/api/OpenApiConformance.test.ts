import createClient from "openapi-fetch"
import { Ajv2020 } from "ajv/dist/2020.js"
import formats from "ajv-formats"
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createPortalToken } from "../../../../layers/AdminOperations.ts"
import { CLIENT_TYPES_PATH, OPENAPI_JSON_PATH, renderClientTypes } from "../../../../layers/http/api/generate.ts"
import { RoutesLive } from "../../../../layers/GatewayLive.ts"
import type { paths } from "../../../../sdks/typescript/src/openapi/gateway.ts"
import { attestedHeaders, relayChatAttested } from "../../../support/engine.ts"
import { useRelayFixture } from "../../../support/relayFixture.ts"
import { fundedKey } from "../../../support/tenant.ts"
import { type Receiver, startReceiver, waitFor } from "../../webhookTestKit.ts"

/**
 * The document against the running gateway: the routes the router serves are exactly the documented ones, and
 * real answers (status, body, receipt headers) validate against the document's schemas with an independent
 * validator (ajv, JSON Schema 2020-12; the document's objects are closed, so an undocumented field fails).
 */
const document = JSON.parse(readFileSync(OPENAPI_JSON_PATH, "utf8"))
// Webhook deliveries go to a receiver on loopback (allowed in tests only), polled often so a delivery arrives quickly.
const fx = useRelayFixture({ WEBHOOK_ALLOW_LOOPBACK: "1", WEBHOOK_POLL_MS: "50" })
let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(() => receiver?.close())

/**
 * Served by the OpenID provider library under its own protocol (its discovery document lists them), not by us; and
 * the portal's static pages and assets, which are a web app, not API (docs/portal.md).
 */
const UNDOCUMENTED = new Set(["* /oauth/*", "GET /portal/*"])
/** SCIM 2.0 describes itself in its own protocol (/scim/v2/Schemas, /ResourceTypes; docs/sso.md), not in OpenAPI. */
const UNDOCUMENTED_PREFIXES = ["* /scim/v2/", "GET /scim/v2/", "POST /scim/v2/", "PUT /scim/v2/", "PATCH /scim/v2/", "DELETE /scim/v2/"]

const ajv = new Ajv2020({ strict: false, allErrors: true })
// ajv-formats is CommonJS: its function is the default export's `default`.
;(formats as unknown as { default: (a: Ajv2020) => void }).default(ajv)
ajv.addSchema({ $id: "doc", components: document.components })
const resolveRefs = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replaceAll("\"#/components/", "\"doc#/components/"))

/** Validates `body` against the documented JSON body of `method path` for `status`; answers ajv's errors. */
const conforms = (method: string, path: string, status: number, body: unknown) => {
  const operation = document.paths[path]?.[method.toLowerCase()]
  const response = operation?.responses[String(status)]
  if (response === undefined) return [`${method} ${path} documents no ${status}`]
  const schema = response.content?.["application/json"]?.schema
  if (schema === undefined) return [`${method} ${path} ${status} documents no JSON body`]
  const validate = ajv.compile(resolveRefs(schema) as object)
  return validate(body) ? [] : validate.errors!.map((e: { instancePath: string; message?: string; params?: unknown }) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)
}
const componentConforms = (name: string, value: unknown) => {
  const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!
  return validate(value) ? [] : validate.errors!.map((e: { instancePath: string; message?: string; params?: unknown }) => `${e.instancePath} ${e.message}`)
}

const decodeHeader = (value: string | null) => JSON.parse(Buffer.from(value!, "base64").toString("utf8"))

let apiKey: string
let orgId: string
let portalToken: string
beforeAll(async () => {
  const key = await fundedKey(fx.gw)
  apiKey = key.apiKey
  orgId = key.orgId
  ;({ token: portalToken } = await fx.gw.runtime.runPromise(
    createPortalToken({ org_id: key.orgId, abilities: "ability:keys.write,ability:keys.read,webhooks.manage" })
  ))
})

describe("the router serves exactly the documented routes", () => {
  it("every route registered with the router is in the document with its method, and every documented one is registered", async () => {
    const registered: Array<string> = []
    const RecordingRouter = Layer.effect(HttpRouter.HttpRouter)(Effect.map(HttpRouter.make, (router) =>
      HttpRouter.HttpRouter.of({
        ...router,
        add: (method, path, handler, options) => {
          registered.push(`${method} ${path}`)
          return router.add(method, path, handler, options)
        },
        addAll: (routes) => {
          for (const r of routes) registered.push(`${r.method} ${r.path}`)
          return router.addAll(routes)
        }
      })))
    // The gateway's own route layers, built over the running gateway's services with a router that records.
    await fx.gw.runtime.runPromise(Effect.scoped(Layer.build(RoutesLive.pipe(Layer.provide(RecordingRouter)))) as unknown as Effect.Effect<unknown, unknown, never>)
    const inCode = new Set(registered.filter((r) => !UNDOCUMENTED.has(r) && !UNDOCUMENTED_PREFIXES.some((p) => r.startsWith(p))).map((r) => r.replace(/:([A-Za-z_]+)/g, "{$1}")))
    const inDocument = new Set(Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)))
    expect(registered.length).toBeGreaterThan(60)
    expect([...inCode].filter((r) => !inDocument.has(r)), "in code, not in docs/openapi.json").toEqual([])
    expect([...inDocument].filter((r) => !inCode.has(r)), "in docs/openapi.json, not in code").toEqual([])
  })
})

describe("real answers of the running gateway conform to the document", () => {
  it("a non-streamed relay call: 200 with the provider's body and a ReceiptV2 and Countersignature in the headers", async () => {
    const { res } = await relayChatAttested(fx.gw.url, apiKey, JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Hello <EMAIL_1>" }] }))
    expect(res.status).toBe(200)
    expect(conforms("POST", "/api/v1/chat/completions", 200, await res.json())).toEqual([])
    const receipt = decodeHeader(res.headers.get("x-service-receipt-v2"))
    expect(componentConforms("ReceiptV2", receipt)).toEqual([])
    expect(res.headers.get("x-service-receipt-v2-jti")).toBe(receipt.jti)
    expect(componentConforms("Countersignature", decodeHeader(res.headers.get("x-service-receipt-v3")))).toEqual([])
    expect(res.headers.get("x-request-id")).toMatch(/\S/)
    expect(fx.provider.received).toHaveLength(1)

    // The receipt, verified by the gateway: 200 with a VerificationResult.
    const verified = await fetch(`${fx.gw.url}/api/v1/receipts/verify`, { method: "POST", body: JSON.stringify({ receipt: res.headers.get("x-service-receipt-v2") }) })
    expect(verified.status).toBe(200)
    const result = await verified.json()
    expect(result.valid).toBe(true)
    expect(conforms("POST", "/api/v1/receipts/verify", 200, result)).toEqual([])
  })

  it("errors: a bad key (401 invalid_key) and a refused attestation answer the shared envelope with a documented code and status", async () => {
    const bad = await relayChatAttested(fx.gw.url, "svc_not_a_key", JSON.stringify({ model: "local-chat", messages: [] }))
    expect(bad.res.status).toBe(401)
    const body = await bad.res.json()
    expect(body.error.code).toBe("invalid_key")
    expect(conforms("POST", "/api/v1/chat/completions", 401, body)).toEqual([])
    expect(document.paths["/api/v1/chat/completions"].post["x-error-codes"]).toContain("invalid_key")

    const unattested = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", messages: [] })
    })
    const refusal = await unattested.json()
    expect(document.paths["/api/v1/chat/completions"].post["x-error-codes"]).toContain(refusal.error.code)
    expect(conforms("POST", "/api/v1/chat/completions", unattested.status, refusal)).toEqual([])
    expect(componentConforms("FailedReceiptV2", decodeHeader(unattested.headers.get("x-service-receipt-failed")))).toEqual([])
    expect(fx.provider.received).toHaveLength(0)
  })

  it("receipts: the stored list and one receipt by jti", async () => {
    await relayChatAttested(fx.gw.url, apiKey, JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "again" }] }))
    const auth = { authorization: `Bearer ${portalToken}` }
    const list = await fetch(`${fx.gw.url}/api/v1/receipts?limit=5`, { headers: auth })
    expect(list.status).toBe(200)
    const page = await list.json()
    expect(page.receipts.length).toBeGreaterThan(0)
    expect(conforms("GET", "/api/v1/receipts", 200, page)).toEqual([])
    const one = await fetch(`${fx.gw.url}/api/v1/receipts/${page.receipts[0].jti}`, { headers: auth })
    expect(conforms("GET", "/api/v1/receipts/{jti}", 200, await one.json())).toEqual([])
    const jwks = await fetch(`${fx.gw.url}/api/.well-known/service-receipt-pubkeys.jwks`)
    expect(conforms("GET", "/api/.well-known/service-receipt-pubkeys.jwks", 200, await jwks.json())).toEqual([])
  })

  it("keys: create (201, shown once), list, patch, an unknown field refused with the documented 400 and nothing created", async () => {
    const headers = { authorization: `Bearer ${portalToken}`, "content-type": "application/json" }
    const created = await fetch(`${fx.gw.url}/api/keys`, { method: "POST", headers, body: JSON.stringify({ name: "openapi", permissions: ["completions"] }) })
    expect(created.status).toBe(201)
    const minted = await created.json()
    expect(conforms("POST", "/api/keys", 201, minted)).toEqual([])
    const patched = await fetch(`${fx.gw.url}/api/keys/${minted.id}`, { method: "PATCH", headers, body: JSON.stringify({ rotation_days: 30 }) })
    expect(conforms("PATCH", "/api/keys/{id}", 200, await patched.json())).toEqual([])
    const list = await fetch(`${fx.gw.url}/api/v1/keys`, { headers })
    expect(conforms("GET", "/api/v1/keys", 200, await list.json())).toEqual([])

    const refused = await fetch(`${fx.gw.url}/api/keys`, { method: "POST", headers, body: JSON.stringify({ name: "nope", colour: "red" }) })
    expect(refused.status).toBe(400)
    const error = await refused.json()
    expect(error.error).toMatchObject({ code: "invalid_request", details: { path: "colour" } })
    expect(conforms("POST", "/api/keys", 400, error)).toEqual([])
    expect(await fx.gw.query("SELECT 1 FROM api_keys WHERE name = 'nope'")).toHaveLength(0)
  })

  it("the key's own views, the model list, the scope vocabulary, health and the document itself", async () => {
    const key = { authorization: `Bearer ${apiKey}` }
    for (const [path, headers] of [["/api/v1/self/key", key], ["/api/v1/self/balance", key], ["/api/v1/self/usage", key], ["/api/v1/models", key], ["/api/v1/keys/scopes", {}], ["/healthz", {}], ["/readyz", {}]] as const) {
      const res = await fetch(`${fx.gw.url}${path}`, { headers })
      expect(res.status, path).toBe(200)
      expect(conforms("GET", path, 200, await res.json()), path).toEqual([])
    }
    const served = await fetch(`${fx.gw.url}/api/v1/openapi.json`)
    expect(served.status).toBe(200)
    expect(served.headers.get("content-type")).toContain("application/json")
    expect(await served.json()).toEqual(document)
  })

  it("webhooks: an endpoint created and listed", async () => {
    const headers = { authorization: `Bearer ${portalToken}`, "content-type": "application/json" }
    const created = await fetch(`${fx.gw.url}/api/v1/webhooks/endpoints`, {
      method: "POST", headers, body: JSON.stringify({ url: `${receiver.url}/relay`, events: ["receipt.signed"] })
    })
    expect(created.status).toBe(201)
    expect(conforms("POST", "/api/v1/webhooks/endpoints", 201, await created.json())).toEqual([])
    const list = await fetch(`${fx.gw.url}/api/v1/webhooks/endpoints`, { headers })
    expect(conforms("GET", "/api/v1/webhooks/endpoints", 200, await list.json())).toEqual([])
  })
})

describe("more real answers: a sweep over the portal, billing, webhook, transparency and key-issuance routes", () => {
  it("each answer's status is documented for its route and its body validates against the documented schema", async () => {
    const admin = (await fx.gw.runtime.runPromise(
      createPortalToken({ org_id: orgId, abilities: "ability:admin" })
    )).token
    await relayChatAttested(fx.gw.url, apiKey, JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "sweep" }] }))
    const json = { "content-type": "application/json" }
    const asAdmin = { authorization: `Bearer ${admin}`, ...json }
    const asKeyPortal = { authorization: `Bearer ${portalToken}`, ...json }
    const call = async (method: string, path: string, documented: string, headers: Record<string, string>, body?: unknown) => {
      const res = await fetch(`${fx.gw.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      const answer = res.status === 204 ? undefined : await res.json()
      return { status: res.status, answer, problems: res.status === 204 ? [] : conforms(method, documented, res.status, answer) }
    }
    const failures: Array<string> = []
    const check = async (method: string, path: string, documented: string, expected: number, headers: Record<string, string>, body?: unknown) => {
      const r = await call(method, path, documented, headers, body)
      if (r.status !== expected) failures.push(`${method} ${path}: ${r.status} ${JSON.stringify(r.answer)}`)
      for (const p of r.problems) failures.push(`${method} ${path} ${r.status}: ${p}`)
      return r.answer
    }
    await check("GET", "/api/v1/billing/balance", "/api/v1/billing/balance", 200, asAdmin)
    const ledger = await check("GET", "/api/v1/billing/ledger", "/api/v1/billing/ledger", 200, asAdmin)
    expect(ledger.entries.length).toBeGreaterThan(1)
    const usage = await check("GET", "/api/v1/billing/usage", "/api/v1/billing/usage", 200, asAdmin)
    expect(usage.records.length).toBeGreaterThan(0)
    await check("POST", "/api/v1/billing/topup", "/api/v1/billing/topup", 201, asAdmin, { amount_usd: "10.00" })
    const sub = await check("POST", "/api/v1/orgs/sub", "/api/v1/orgs/sub", 201, asAdmin, { name: "sub of the sweep" })
    await check("GET", "/api/v1/orgs/sub", "/api/v1/orgs/sub", 200, asAdmin)
    await check("GET", `/api/v1/orgs/sub/${sub.org_id}/usage`, "/api/v1/orgs/sub/{id}/usage", 200, asAdmin)
    await check("PUT", "/api/v1/byok/openai", "/api/v1/byok/{provider}", 200, asAdmin, { api_key: "sk-sweep-0123456789" })
    await check("GET", "/api/v1/byok", "/api/v1/byok", 200, asAdmin)
    const audit = await check("GET", "/api/v1/audit", "/api/v1/audit", 200, asAdmin)
    expect(audit.entries.length).toBeGreaterThan(0)
    await check("GET", "/api/admin/ledger/check", "/api/admin/ledger/check", 200, asAdmin)
    const endpoint = await check("POST", "/api/v1/webhooks/endpoints", "/api/v1/webhooks/endpoints", 201, asKeyPortal, { url: `${receiver.url}/sweep`, events: ["*"] })
    await check("PATCH", `/api/v1/webhooks/endpoints/${endpoint.id}`, "/api/v1/webhooks/endpoints/{id}", 200, asKeyPortal, { events: ["receipt.signed"] })
    await check("POST", `/api/v1/webhooks/endpoints/${endpoint.id}/rotate`, "/api/v1/webhooks/endpoints/{id}/rotate", 200, asKeyPortal)
    const delivery = await check("POST", `/api/v1/webhooks/endpoints/${endpoint.id}/test`, "/api/v1/webhooks/endpoints/{id}/test", 202, asKeyPortal)
    // The delivery itself, as the receiver got it: every documented header, and the documented payload.
    const [got] = await waitFor(() => receiver.forEvent(delivery.event_id).length > 0 && receiver.forEvent(delivery.event_id), 10_000, "the test delivery")
    const documentedHeaders = document.webhooks.delivery.post.parameters.map((p: { name: string }) => p.name.toLowerCase())
    expect(documentedHeaders.filter((h: string) => got!.headers[h] === undefined)).toEqual([])
    expect(Object.keys(got!.headers).filter((h) => h.startsWith("x-service-") && !documentedHeaders.includes(h))).toEqual([])
    expect(componentConforms("WebhookPayload", got!.body)).toEqual([])
    await check("GET", "/api/v1/webhooks/deliveries", "/api/v1/webhooks/deliveries", 200, asKeyPortal)
    await check("GET", `/api/v1/webhooks/deliveries/${delivery.id}`, "/api/v1/webhooks/deliveries/{id}", 200, asKeyPortal)
    await check("POST", `/api/v1/webhooks/deliveries/${delivery.id}/replay`, "/api/v1/webhooks/deliveries/{id}/replay", 201, asKeyPortal)
    await check("GET", "/api/v1/models?include=unavailable", "/api/v1/models", 200, {})
    await check("GET", "/api/v1/models?include=everything", "/api/v1/models", 400, {})
    await check("GET", "/api/v1/transparency/sth", "/api/v1/transparency/sth", 200, {})
    await check("POST", "/api/v1/self-service/key", "/api/v1/self-service/key", 201, { ...json, "x-forwarded-for": "198.51.100.77" }, {})
    await check("POST", "/api/v1/demo/key", "/api/v1/demo/key", 201, { ...json, "x-forwarded-for": "198.51.100.78" }, {})
    await check("POST", "/api/v1/demo/key", "/api/v1/demo/key", 400, { ...json, "x-forwarded-for": "198.51.100.79" }, { anything: 1 })
    await check("GET", "/api/v1/receipts", "/api/v1/receipts", 401, {})
    await check("POST", "/api/v1/receipts/verify", "/api/v1/receipts/verify", 422, json, { receipt: { v: 2, alg: "ES256", kid: "nope" } })
    expect(failures).toEqual([])
  })

  it("a streamed relay call ends with the receipt-v2 trailer whose data is a ReceiptV2", async () => {
    const body = JSON.stringify({ model: "local-chat", stream: true, messages: [{ role: "user", content: "stream <EMAIL_1_abcd>" }] })
    const { res } = await relayChatAttested(fx.gw.url, apiKey, body)
    expect(res.status).toBe(200)
    expect(Object.keys(document.paths["/api/v1/chat/completions"].post.responses["200"].content)).toContain(res.headers.get("content-type")!.split(";")[0])
    const frames = (await res.text()).split("\n\n")
    const trailer = frames.find((f) => f.startsWith("event: receipt-v2\n"))
    expect(trailer).toBeDefined()
    expect(componentConforms("ReceiptV2", JSON.parse(trailer!.split("\n").find((l) => l.startsWith("data: "))!.slice(6)))).toEqual([])
  })
})

/**
 * A client generated from docs/openapi.json by openapi-typescript (types) and openapi-fetch (calls) makes a relay
 * call and verifies its receipt. The calls type-check against the generated types (`tsc --noEmit` covers this file),
 * so a document that stopped describing them would fail the type-check.
 */
describe("a client generated from the OpenAPI document", () => {
  it("sdks/typescript/src/openapi/gateway.ts is what openapi-typescript generates from docs/openapi.json now (npm run openapi)", async () => {
    expect(readFileSync(CLIENT_TYPES_PATH, "utf8")).toBe(await renderClientTypes(readFileSync(OPENAPI_JSON_PATH, "utf8")))
  })

  it("relays a chat completion with the attestation headers and verifies the receipt it got, through openapi-fetch", async () => {
    const client = createClient<paths>({ baseUrl: fx.gw.url })
    const body = { model: "local-chat", messages: [{ role: "user", content: "Hello <EMAIL_1_abcd>" }] }
    const bytes = JSON.stringify(body)
    const attestation = await attestedHeaders("chat.completions", bytes)
    const relayed = await client.POST("/api/v1/chat/completions", {
      params: {
        header: {
          "X-Service-Engine": attestation["x-service-engine"],
          "X-Service-Attestation": attestation["x-service-attestation"],
          "Idempotency-Key": crypto.randomUUID()
        }
      },
      headers: { Authorization: `Bearer ${apiKey}` },
      body,
      // The attestation covers these exact bytes.
      bodySerializer: () => bytes
    })
    expect(relayed.error).toBeUndefined()
    expect(relayed.response.status).toBe(200)
    expect((relayed.data as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("Echo: Hello <EMAIL_1_abcd>")
    expect(fx.provider.received).toHaveLength(1)

    const receipt = relayed.response.headers.get("x-service-receipt-v2")!
    const verified = await client.POST("/api/v1/receipts/verify", { body: { receipt, attestation: attestation["x-service-attestation"] } })
    expect(verified.response.status).toBe(200)
    expect(verified.data?.valid).toBe(true)
    expect(verified.data?.checks.every((c) => c.status !== "fail")).toBe(true)
  })

  it("answers a refusal as the typed error envelope", async () => {
    const client = createClient<paths>({ baseUrl: fx.gw.url })
    const refused = await client.GET("/api/v1/self/key", { headers: { Authorization: "Bearer svc_not_a_key" } })
    expect(refused.response.status).toBe(401)
    expect(refused.error?.error.code).toBe("invalid_key")
  })
})
