import { describe, expect, it } from "vitest"
import { encodeDeliveryBody } from "../../../sdks/typescript/src/wire/webhooks/payload.ts"
import { verifyV0, verifyV1 } from "../../../sdks/typescript/src/wire/webhooks/receiver.ts"
import { deliveryHeaders, signV0, signV1 } from "../../../sdks/typescript/src/wire/webhooks/signature.ts"
import { verifyWebhook, WebhookVerificationError } from "../../../sdks/typescript/src/verify/index.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const w = readVectors("webhooks.json")

describe("webhooks.json: the gateway's sender reproduces every signature and header", () => {
  it("v1 and v0 per payload", async () => {
    for (const c of w.sign) {
      expect(encodeDeliveryBody(c.payload)).toBe(c.body)
      expect(await signV1(w.secret, c.timestamp, c.body)).toBe(c.v1)
      expect(await signV0(w.secret, c.payload)).toBe(c.v0)
    }
  })

  it("the full header set of a delivery", async () => {
    const { payload, delivery_id, attempt, headers } = w.delivery
    expect(
      await deliveryHeaders({ secret: w.secret, event: payload.event, eventId: payload.event_id, timestamp: payload.timestamp, deliveryId: delivery_id, attempt, payload })
    ).toEqual(headers)
  })
})

describe("webhooks.json: verifyWebhook (SDK) and the receiver helpers (sdks/typescript/src/wire/webhooks/receiver.ts)", () => {
  it.each(rows(w.verify))("%s", async (_n, c: any) => {
    const outcome = await verifyWebhook({ body: c.body, headers: c.headers, secret: c.secret, nowSeconds: c.now_seconds, toleranceSeconds: c.tolerance_seconds }).then(
      () => ({ ok: true }),
      (error: unknown) => {
        expect(error).toBeInstanceOf(WebhookVerificationError)
        return { ok: false, code: (error as WebhookVerificationError).code }
      }
    )
    expect(outcome).toEqual(c.expected)
    // the scheme the SDK chose, checked directly, agrees on accept/refuse
    const v1 = c.headers["X-Service-Signature"]
    const v0 = c.headers["X-Service-Webhook-Signature"]
    if (v1 === undefined && v0 === undefined) return
    const common = { rawBody: c.body, secret: c.secret, nowSeconds: c.now_seconds, toleranceSeconds: c.tolerance_seconds }
    const direct = v1 !== undefined ? await verifyV1({ header: v1, ...common }) : await verifyV0({ header: v0, ...common })
    expect(direct.ok).toBe(c.expected.ok)
  })
})
