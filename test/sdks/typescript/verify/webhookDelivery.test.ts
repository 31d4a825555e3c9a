import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWebhookDeduper, verifyWebhook, WebhookVerificationError } from "../../../../sdks/typescript/src/verify/index.ts"
import { startTestGateway, type TestGateway } from "../../../support/gateway.ts"
import { api, orgWithToken, recordEvent, startReceiver, waitFor, type Receiver } from "../../../layers/webhookTestKit.ts"

/**
 * Deliveries from a real gateway's dispatcher, received over HTTP on 127.0.0.1 and checked the way an SDK user does:
 * verifyWebhook on the raw body and Node's request headers, then createWebhookDeduper on the event id.
 */
let gw: TestGateway
let receiver: Receiver
beforeAll(async () => {
  gw = await startTestGateway({ WEBHOOK_ALLOW_LOOPBACK: "1", WEBHOOK_RETRY_SCHEDULE_MS: "0,50,50,50,50,50,50", WEBHOOK_POLL_MS: "50" })
  // The first attempt of every event fails with 500, so each event arrives twice: a redelivery to dedupe.
  receiver = await startReceiver((_delivery, previous) => (previous === 0 ? 500 : 200))
})
afterAll(async () => {
  await receiver?.close()
  await gw?.close()
})

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(WebhookVerificationError)
  return (error as WebhookVerificationError).code
}

describe("verifyWebhook and createWebhookDeduper on real deliveries", () => {
  it("a delivery verifies with the endpoint's secret; a stale clock, a wrong or rotated secret throw their codes; the retry is a duplicate", async () => {
    const { orgId, token } = await orgWithToken(gw, ["ability:admin"])
    const created = await api(gw, token, "POST", "/api/v1/webhooks/endpoints", { url: receiver.url, events: ["key.created"] })
    expect(created.status).toBe(201)
    const secret: string = created.json.secret
    const eventId = await recordEvent(gw, orgId, "key.created", { key_prefix: "svc_sdkhook" })
    const [first, retry] = await waitFor(() => receiver.forEvent(eventId).length >= 2 && receiver.forEvent(eventId), 20_000, "two attempts")

    const deduper = createWebhookDeduper()
    for (const delivery of [first!, retry!]) {
      const now = Number(delivery.headers["x-service-webhook-timestamp"])
      expect(await verifyWebhook({ body: delivery.rawBody, headers: delivery.headers, secret, nowSeconds: now + 1 })).toBe(true)
      expect(await codeOf(verifyWebhook({ body: delivery.rawBody, headers: delivery.headers, secret, nowSeconds: now + 301 }))).toBe("stale_timestamp")
      expect(await codeOf(verifyWebhook({ body: delivery.rawBody, headers: delivery.headers, secret: "whsec_wrong", nowSeconds: now }))).toBe("bad_signature")
    }
    expect(deduper.seen(deduper.eventIdOf({ body: first!.rawBody, headers: first!.headers })!)).toBe(false)
    expect(deduper.seen(deduper.eventIdOf({ body: retry!.rawBody, headers: retry!.headers })!)).toBe(true)

    // after rotation the old secret no longer verifies a new delivery
    const rotated = await api(gw, token, "POST", `/api/v1/webhooks/endpoints/${created.json.id}/rotate`)
    expect(rotated.status).toBe(200)
    const next = await recordEvent(gw, orgId, "key.created", { key_prefix: "svc_sdkhook2" })
    const [later] = await waitFor(() => receiver.forEvent(next).length >= 1 && receiver.forEvent(next), 20_000, "a delivery after rotation")
    const now = Number(later!.headers["x-service-webhook-timestamp"])
    expect(await codeOf(verifyWebhook({ body: later!.rawBody, headers: later!.headers, secret, nowSeconds: now }))).toBe("bad_signature")
    expect(await verifyWebhook({ body: later!.rawBody, headers: later!.headers, secret: rotated.json.secret, nowSeconds: now })).toBe(true)
    expect(deduper.seen(next)).toBe(false)
  })
})
