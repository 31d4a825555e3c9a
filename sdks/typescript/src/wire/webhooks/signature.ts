// Sender side of webhook signing: the v1 and v0 signature schemes and the full header record that
// accompanies every delivery (spec, Events: "Headers on every delivery" and "Signature rules").
// Portable (WebCrypto), so the same code can sign in any runtime; HMAC is async there.
import { hmacSha256Hex } from "./hmac.ts"
import { canonicalJson, encodeDeliveryBody, type WebhookPayload } from "./payload.ts"
import { MAX_ATTEMPTS } from "./attempts.ts"

export const SIGNATURE_ALGORITHM = "HMAC-SHA256"
export const WEBHOOK_USER_AGENT = "Service-Webhook/1.0"

/** v1 (preferred): `t=<unix>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">`, Stripe-compatible. */
export const signV1 = async (secret: string, timestampSeconds: number, rawBody: string): Promise<string> => {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError("timestampSeconds must be a non-negative integer of Unix seconds")
  }
  const mac = await hmacSha256Hex(secret, `${timestampSeconds}.${rawBody}`)
  return `t=${timestampSeconds},v1=${mac}`
}

/** v0 (legacy): `sha256=<hex HMAC-SHA256 of the JCS canonical JSON payload>`; the payload carries its own timestamp. */
export const signV0 = async (secret: string, payload: object): Promise<string> =>
  `sha256=${await hmacSha256Hex(secret, canonicalJson(payload))}`

export type DeliveryHeaderInput = {
  readonly secret: string
  readonly event: string
  readonly eventId: string
  readonly timestamp: number
  /** Numeric id of this attempt's row; changes per attempt. */
  readonly deliveryId: number | bigint | string
  /** 1..MAX_ATTEMPTS */
  readonly attempt: number
  readonly payload: WebhookPayload
  /** The exact bytes that will be sent; defaults to `encodeDeliveryBody(payload)`. */
  readonly rawBody?: string
}

/**
 * Every header of one delivery attempt. Throws when the inputs contradict each other (header
 * values that differ from the payload would make receivers' v0 and v1 checks disagree), which is
 * a programming error in the dispatcher, not a runtime condition.
 */
export const deliveryHeaders = async (input: DeliveryHeaderInput): Promise<Record<string, string>> => {
  const { secret, event, eventId, timestamp, deliveryId, attempt, payload } = input
  if (payload.event !== event || payload.event_id !== eventId || payload.timestamp !== timestamp) {
    throw new TypeError("event, eventId and timestamp must equal the payload's event, event_id and timestamp")
  }
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > MAX_ATTEMPTS) {
    throw new RangeError(`attempt must be an integer from 1 to ${MAX_ATTEMPTS}`)
  }
  const deliveryIdText = String(deliveryId)
  if (!/^[0-9]+$/.test(deliveryIdText)) throw new TypeError("deliveryId must be numeric")
  const rawBody = input.rawBody ?? encodeDeliveryBody(payload)
  const [v1, v0] = await Promise.all([signV1(secret, timestamp, rawBody), signV0(secret, payload)])
  return {
    "Content-Type": "application/json",
    "User-Agent": WEBHOOK_USER_AGENT,
    "Idempotency-Key": eventId,
    "X-Service-Signature": v1,
    "X-Service-Webhook-Signature": v0,
    "X-Service-Webhook-Signature-Alg": SIGNATURE_ALGORITHM,
    "X-Service-Webhook-Timestamp": String(timestamp),
    "X-Service-Webhook-Event": event,
    "X-Service-Webhook-Event-Id": eventId,
    "X-Service-Webhook-Delivery-Id": deliveryIdText,
    "X-Service-Webhook-Attempt": String(attempt)
  }
}
