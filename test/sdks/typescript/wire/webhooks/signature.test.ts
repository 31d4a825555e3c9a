import { createHmac } from "node:crypto"
import Stripe from "stripe"
import { describe, expect, it } from "vitest"
import { buildTestEventPayload, encodeDeliveryBody, type WebhookPayload } from "../../../../../sdks/typescript/src/wire/webhooks/payload.ts"
import { deliveryHeaders, signV0, signV1 } from "../../../../../sdks/typescript/src/wire/webhooks/signature.ts"

const secret = "whsec_test_secret_value"
const stripe = new Stripe("sk_test_x")

const payload: WebhookPayload = {
  event: "key.revoked",
  event_id: "6f1c2a4e-1b7d-4c1e-9a53-0f6f7f0a1b2c",
  timestamp: 1_700_000_000,
  data: { key_prefix: "svc_abc123", z: 1, a: [true, null] }
}

describe("signV1", () => {
  it("produces t=<unix>,v1=<lowercase hex> over '<t>.<body>'", async () => {
    const body = encodeDeliveryBody(payload)
    const header = await signV1(secret, payload.timestamp, body)
    const expected = createHmac("sha256", secret).update(`${payload.timestamp}.${body}`).digest("hex")
    expect(header).toBe(`t=1700000000,v1=${expected}`)
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
  })

  it("is accepted by Stripe's independent webhook verifier", async () => {
    const body = encodeDeliveryBody(payload)
    const header = await signV1(secret, payload.timestamp, body)
    const receivedAtMs = (payload.timestamp + 10) * 1000
    expect(stripe.webhooks.signature!.verifyHeader(body, header, secret, 300, undefined, receivedAtMs)).toBe(true)
    const event = stripe.webhooks.constructEvent(body, header, secret, 300, undefined, receivedAtMs)
    expect(event).toEqual(payload)
  })

  it("is rejected by Stripe's verifier for a tampered body, a wrong secret or a stale timestamp", async () => {
    const body = encodeDeliveryBody(payload)
    const header = await signV1(secret, payload.timestamp, body)
    const receivedAtMs = payload.timestamp * 1000
    expect(() => stripe.webhooks.signature!.verifyHeader(body.replace("svc_abc123", "svc_abc124"), header, secret, 300, undefined, receivedAtMs)).toThrow()
    expect(() => stripe.webhooks.signature!.verifyHeader(body, header, "whsec_other", 300, undefined, receivedAtMs)).toThrow()
    expect(() => stripe.webhooks.signature!.verifyHeader(body, header, secret, 300, undefined, (payload.timestamp + 301) * 1000)).toThrow(/tolerance/)
  })

  it("refuses a timestamp that is not whole Unix seconds", async () => {
    await expect(signV1(secret, 1.5, "{}")).rejects.toThrow(RangeError)
    await expect(signV1(secret, -1, "{}")).rejects.toThrow(RangeError)
  })
})

describe("signV0", () => {
  it("is sha256=<hex HMAC> of the JCS canonical payload, independent of key order", async () => {
    const canonical =
      '{"data":{"a":[true,null],"key_prefix":"svc_abc123","z":1},"event":"key.revoked","event_id":"6f1c2a4e-1b7d-4c1e-9a53-0f6f7f0a1b2c","timestamp":1700000000}'
    const expected = `sha256=${createHmac("sha256", secret).update(canonical).digest("hex")}`
    expect(await signV0(secret, payload)).toBe(expected)
    const reordered = { timestamp: payload.timestamp, data: { z: 1, a: [true, null], key_prefix: "svc_abc123" }, event_id: payload.event_id, event: payload.event }
    expect(await signV0(secret, reordered)).toBe(expected)
  })
})

describe("deliveryHeaders", () => {
  it("carries every header of the spec table with consistent values", async () => {
    const body = encodeDeliveryBody(payload)
    const headers = await deliveryHeaders({
      secret,
      event: payload.event,
      eventId: payload.event_id,
      timestamp: payload.timestamp,
      deliveryId: 42,
      attempt: 3,
      payload
    })
    expect(headers).toEqual({
      "Content-Type": "application/json",
      "User-Agent": "Service-Webhook/1.0",
      "Idempotency-Key": payload.event_id,
      "X-Service-Signature": await signV1(secret, payload.timestamp, body),
      "X-Service-Webhook-Signature": await signV0(secret, payload),
      "X-Service-Webhook-Signature-Alg": "HMAC-SHA256",
      "X-Service-Webhook-Timestamp": "1700000000",
      "X-Service-Webhook-Event": "key.revoked",
      "X-Service-Webhook-Event-Id": payload.event_id,
      "X-Service-Webhook-Delivery-Id": "42",
      "X-Service-Webhook-Attempt": "3"
    })
  })

  it("signs the given raw body when one is supplied", async () => {
    const rawBody = JSON.stringify(payload)
    const headers = await deliveryHeaders({ secret, event: payload.event, eventId: payload.event_id, timestamp: payload.timestamp, deliveryId: "7", attempt: 1, payload, rawBody })
    expect(stripe.webhooks.signature!.verifyHeader(rawBody, headers["X-Service-Signature"]!, secret, 300, undefined, payload.timestamp * 1000)).toBe(true)
  })

  it("makes the v1 raw body and the v0 canonical JSON the same bytes by default", async () => {
    const headers = await deliveryHeaders({ secret, event: payload.event, eventId: payload.event_id, timestamp: payload.timestamp, deliveryId: 1, attempt: 1, payload })
    const body = encodeDeliveryBody(payload)
    expect(headers["X-Service-Webhook-Signature"]).toBe(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`)
  })

  it("refuses inputs that contradict the payload or the attempt range", async () => {
    const base = { secret, event: payload.event, eventId: payload.event_id, timestamp: payload.timestamp, deliveryId: 1, attempt: 1, payload }
    await expect(deliveryHeaders({ ...base, eventId: "other" })).rejects.toThrow(TypeError)
    await expect(deliveryHeaders({ ...base, timestamp: payload.timestamp + 1 })).rejects.toThrow(TypeError)
    await expect(deliveryHeaders({ ...base, event: "key.created" })).rejects.toThrow(TypeError)
    await expect(deliveryHeaders({ ...base, attempt: 0 })).rejects.toThrow(RangeError)
    await expect(deliveryHeaders({ ...base, attempt: 8 })).rejects.toThrow(RangeError)
    await expect(deliveryHeaders({ ...base, deliveryId: "12a" })).rejects.toThrow(TypeError)
  })
})

describe("buildTestEventPayload", () => {
  it("builds webhook.test with a test- event id, Unix seconds and data.endpoint_id/sent_at", () => {
    const now = new Date("2025-01-02T03:04:05.678Z")
    const built = buildTestEventPayload({ endpointId: 9, now, uuid: "0b0e1e0c-3d7a-4b4e-8f8a-2b9c1d0e4f5a" })
    expect(built).toEqual({
      event: "webhook.test",
      event_id: "test-0b0e1e0c-3d7a-4b4e-8f8a-2b9c1d0e4f5a",
      timestamp: Math.floor(now.getTime() / 1000),
      data: { endpoint_id: 9, sent_at: "2025-01-02T03:04:05.678Z" }
    })
  })
})
