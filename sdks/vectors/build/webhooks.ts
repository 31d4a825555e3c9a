// webhooks.json: the v1 and v0 signature schemes over fixed secrets, timestamps and bodies, the full header set of a
// delivery, and what verifyWebhook answers for genuine and failing deliveries.
import { encodeDeliveryBody, type WebhookPayload } from "../../typescript/src/wire/webhooks/payload.ts"
import { deliveryHeaders, signV0, signV1 } from "../../typescript/src/wire/webhooks/signature.ts"
import { verifyWebhook, WebhookVerificationError } from "../../typescript/src/verify/index.ts"

const SECRET = "whsec_test_vectors_0123456789abcdef"
const T = 1_735_689_600

const payloads: ReadonlyArray<WebhookPayload> = [
  { event: "receipt.signed", event_id: "6f1c0d9e-4b7a-4c1e-9d2f-0a1b2c3d4e5f", timestamp: T, data: { jti: "0".repeat(31) + "1", chain_id: "receipt-v2-org-org_vectors", seq: 1 } },
  { event: "billing.credit_added", event_id: "0d2e6c4a-1f3b-4a5c-8d7e-9f0a1b2c3d4e", timestamp: T + 60, data: { amount_micros: 10_000_000, note: "Grüße, ünïcödé" } }
]

export const buildWebhookVectors = async () => {
  const first = payloads[0]!
  const body = encodeDeliveryBody(first)
  const headers = await deliveryHeaders({ secret: SECRET, event: first.event, eventId: first.event_id, timestamp: T, deliveryId: 901, attempt: 1, payload: first })
  const v1Only = { "X-Service-Signature": headers["X-Service-Signature"]! }
  const v0Only = { "X-Service-Webhook-Signature": headers["X-Service-Webhook-Signature"]! }
  const verifyCases = [
    { name: "genuine delivery, all headers", body, headers, secret: SECRET, now_seconds: T + 5, tolerance_seconds: 300 },
    { name: "v1 only, at the edge of the tolerance", body, headers: v1Only, secret: SECRET, now_seconds: T + 300, tolerance_seconds: 300 },
    { name: "v1 with several v1= entries (one matches)", body, headers: { "X-Service-Signature": `${headers["X-Service-Signature"]!},v1=${"0".repeat(64)}` }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v0 only (legacy sender)", body, headers: v0Only, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "stale timestamp", body, headers, secret: SECRET, now_seconds: T + 301, tolerance_seconds: 300 },
    { name: "timestamp too far in the future", body, headers, secret: SECRET, now_seconds: T - 301, tolerance_seconds: 300 },
    { name: "a smaller tolerance", body, headers, secret: SECRET, now_seconds: T + 61, tolerance_seconds: 60 },
    { name: "wrong secret", body, headers, secret: "whsec_wrong", now_seconds: T, tolerance_seconds: 300 },
    { name: "body changed", body: body.replace('"seq":1', '"seq":2'), headers, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v0 only, wrong secret", body, headers: v0Only, secret: "whsec_wrong", now_seconds: T, tolerance_seconds: 300 },
    { name: "v0 only, stale payload timestamp", body, headers: v0Only, secret: SECRET, now_seconds: T + 301, tolerance_seconds: 300 },
    { name: "v1 failing is not rescued by a valid v0", body, headers: { ...headers, "X-Service-Signature": await signV1("whsec_wrong", T, body) }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "no signature headers", body, headers: { "Content-Type": "application/json" }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v1 header without t=", body, headers: { "X-Service-Signature": `v1=${"0".repeat(64)}` }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v1 header with t= but no v1=", body, headers: { "X-Service-Signature": `t=${T}` }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v1 header with two t=", body, headers: { "X-Service-Signature": `t=${T},t=${T + 1},v1=${"0".repeat(64)}` }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v0 header of another form", body, headers: { "X-Service-Webhook-Signature": "md5=00" }, secret: SECRET, now_seconds: T, tolerance_seconds: 300 },
    { name: "v0 only, body not JSON", body: "not json", headers: v0Only, secret: SECRET, now_seconds: T, tolerance_seconds: 300 }
  ]
  return {
    description:
      "Webhook signatures. v1: X-Service-Signature = `t=<unix>,v1=<lowercase hex HMAC-SHA256(secret UTF-8, \"<t>.<raw body>\")>`. v0: X-Service-Webhook-Signature = `sha256=<hex HMAC-SHA256(secret, JCS of the payload)>`; the payload carries its own timestamp. `sign`: reproduce the header values. `delivery`: every header of one delivery attempt. `verify`: verifyWebhook(body, headers (names case-insensitive), secret, tolerance_seconds) at now_seconds answers true or fails with `code` (missing_headers, malformed_header, bad_signature, stale_timestamp, malformed_body). v1 is used whenever its header is present; v0 only when it is alone.",
    version: 1,
    secret: SECRET,
    sign: await Promise.all(payloads.map(async (payload) => {
      const raw = encodeDeliveryBody(payload)
      return { payload, body: raw, timestamp: payload.timestamp, v1: await signV1(SECRET, payload.timestamp, raw), v0: await signV0(SECRET, payload) }
    })),
    delivery: { payload: first, delivery_id: 901, attempt: 1, body, headers },
    verify: await Promise.all(verifyCases.map(async (c) => ({ ...c, expected: await outcome(c) })))
  }
}

const outcome = async (input: { body: string; headers: Record<string, string>; secret: string; now_seconds: number; tolerance_seconds: number }) => {
  try {
    await verifyWebhook({ body: input.body, headers: input.headers, secret: input.secret, nowSeconds: input.now_seconds, toleranceSeconds: input.tolerance_seconds })
    return { ok: true }
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    return { ok: false, code: error.code }
  }
}
