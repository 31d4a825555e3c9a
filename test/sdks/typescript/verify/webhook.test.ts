import { describe, expect, it } from "vitest"
import { encodeDeliveryBody, type WebhookPayload } from "../../../../sdks/typescript/src/wire/webhooks/payload.ts"
import { deliveryHeaders, signV0, signV1 } from "../../../../sdks/typescript/src/wire/webhooks/signature.ts"
import { createWebhookDeduper, verifyWebhook, WebhookVerificationError } from "../../../../sdks/typescript/src/verify/index.ts"

const secret = "whsec_sdk_test_secret"
const t = 1_735_732_800
const payload: WebhookPayload = { event: "key.created", event_id: "6f1c0d9e-4b7a-4c1e-9d2f-0a1b2c3d4e5f", timestamp: t, data: { key_prefix: "svc_abcdef" } }
const body = encodeDeliveryBody(payload)
/** Every header of a real delivery, from the gateway's own sender code. */
const headers = await deliveryHeaders({ secret, event: payload.event, eventId: payload.event_id, timestamp: t, deliveryId: 901, attempt: 1, payload })

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(WebhookVerificationError)
  return (error as WebhookVerificationError).code
}

describe("verifyWebhook", () => {
  it("accepts a real delivery with headers as a record, as Headers, in any case, with the body as text or bytes", async () => {
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
    for (const h of [headers, lower, new Headers(headers), { ...lower, "x-service-signature": [headers["X-Service-Signature"]!] }]) {
      expect(await verifyWebhook({ body, headers: h, secret, nowSeconds: t + 10 })).toBe(true)
    }
    expect(await verifyWebhook({ body: new TextEncoder().encode(body), headers, secret, nowSeconds: t })).toBe(true)
  })

  it("a stale (or future) timestamp throws stale_timestamp; the tolerance is adjustable", async () => {
    expect(await codeOf(verifyWebhook({ body, headers, secret, nowSeconds: t + 301 }))).toBe("stale_timestamp")
    expect(await codeOf(verifyWebhook({ body, headers, secret, nowSeconds: t - 301 }))).toBe("stale_timestamp")
    expect(await verifyWebhook({ body, headers, secret, nowSeconds: t + 301, toleranceSeconds: 600 })).toBe(true)
    expect(await codeOf(verifyWebhook({ body, headers, secret, nowSeconds: t + 11, toleranceSeconds: 10 }))).toBe("stale_timestamp")
  })

  it("a wrong secret or a changed body throws bad_signature", async () => {
    expect(await codeOf(verifyWebhook({ body, headers, secret: "whsec_other", nowSeconds: t }))).toBe("bad_signature")
    expect(await codeOf(verifyWebhook({ body: body.replace("abcdef", "abcdeg"), headers, secret, nowSeconds: t }))).toBe("bad_signature")
  })

  it("v0 alone verifies (legacy senders), with the payload's timestamp as its clock", async () => {
    const v0Only = { "X-Service-Webhook-Signature": await signV0(secret, payload) }
    expect(await verifyWebhook({ body, headers: v0Only, secret, nowSeconds: t })).toBe(true)
    expect(await codeOf(verifyWebhook({ body, headers: v0Only, secret: "whsec_other", nowSeconds: t }))).toBe("bad_signature")
    expect(await codeOf(verifyWebhook({ body, headers: v0Only, secret, nowSeconds: t + 301 }))).toBe("stale_timestamp")
  })

  it("when v1 is present and fails, a valid v0 does not rescue it (no downgrade)", async () => {
    const mixed = { ...headers, "X-Service-Signature": await signV1("whsec_other", t, body) }
    expect(await codeOf(verifyWebhook({ body, headers: mixed, secret, nowSeconds: t }))).toBe("bad_signature")
  })

  it("missing or malformed headers, a non-UTF-8 body and an empty secret each have their code", async () => {
    expect(await codeOf(verifyWebhook({ body, headers: {}, secret, nowSeconds: t }))).toBe("missing_headers")
    expect(await codeOf(verifyWebhook({ body, headers: { "X-Service-Signature": "  " }, secret, nowSeconds: t }))).toBe("missing_headers")
    expect(await codeOf(verifyWebhook({ body, headers: { "X-Service-Signature": "v1=abc" }, secret, nowSeconds: t }))).toBe("malformed_header")
    expect(await codeOf(verifyWebhook({ body, headers: { "X-Service-Signature": `t=${t}` }, secret, nowSeconds: t }))).toBe("malformed_header")
    expect(await codeOf(verifyWebhook({ body, headers: { "X-Service-Webhook-Signature": "md5=00" }, secret, nowSeconds: t }))).toBe("malformed_header")
    expect(await codeOf(verifyWebhook({ body: new Uint8Array([0xff, 0xfe]), headers, secret, nowSeconds: t }))).toBe("malformed_body")
    expect(await codeOf(verifyWebhook({ body, headers, secret: "", nowSeconds: t }))).toBe("missing_secret")
  })

  it("error messages say what failed and never contain the secret", async () => {
    const error = await verifyWebhook({ body, headers, secret, nowSeconds: t + 999 }).catch((e: Error) => e)
    expect((error as Error).message).toMatch(/^v1: .*timestamp is outside the tolerance/)
    expect((error as Error).message).not.toContain(secret)
  })
})

describe("createWebhookDeduper", () => {
  it("answers false the first time an event_id is seen and true for a redelivery within the TTL", () => {
    let now = 0
    const deduper = createWebhookDeduper({ ttlMs: 1000, now: () => now })
    expect(deduper.seen(payload.event_id)).toBe(false)
    now = 999
    expect(deduper.seen(payload.event_id)).toBe(true)
    expect(deduper.seen("another")).toBe(false)
    now = 1000
    expect(deduper.seen(payload.event_id)).toBe(false)
    expect(deduper.size()).toBe(2)
  })

  it("finds the event id in Idempotency-Key, X-Service-Webhook-Event-Id or the body", () => {
    const deduper = createWebhookDeduper()
    expect(deduper.eventIdOf({ body, headers })).toBe(payload.event_id)
    expect(deduper.eventIdOf({ body: "{}", headers: { "x-service-webhook-event-id": "e-2" } })).toBe("e-2")
    expect(deduper.eventIdOf({ body, headers: {} })).toBe(payload.event_id)
    expect(deduper.eventIdOf({ body: "not json", headers: {} })).toBeUndefined()
    expect(() => deduper.seen("")).toThrow(TypeError)
  })
})
