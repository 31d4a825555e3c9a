// The JSON body of a webhook delivery and its exact wire encoding.
// Portable (no node: imports) so the SDK can reuse it in browsers and Deno.
import { canonicalString } from "../crypto/jcs.ts"

/** The delivery body fields fixed by the spec (Events, Delivery format). */
export type WebhookPayload = {
  readonly event: string
  readonly event_id: string
  /** Unix seconds; equals the X-Service-Webhook-Timestamp header. */
  readonly timestamp: number
  readonly data: Readonly<Record<string, unknown>>
}

/**
 * The bytes we POST. We send the JCS (RFC 8785) form so that the raw body signed by v1 and the
 * canonical JSON signed by v0 are the same string: a receiver can check either scheme over the
 * bytes it received without re-serialising.
 */
export const encodeDeliveryBody = (payload: WebhookPayload): string => canonicalJson(payload)

/** JCS canonical JSON; throws on values JSON cannot represent (undefined at top level, NaN, etc.). */
export const canonicalJson = (value: unknown): string => canonicalString(value)

/** The synthetic `webhook.test` event: `data` carries `endpoint_id` and `sent_at` (spec, Delivery format). */
export const buildTestEventPayload = (input: {
  readonly endpointId: number
  readonly now: Date
  readonly uuid: string
}): WebhookPayload => ({
  event: "webhook.test",
  event_id: `test-${input.uuid}`,
  timestamp: Math.floor(input.now.getTime() / 1000),
  data: { endpoint_id: input.endpointId, sent_at: input.now.toISOString() }
})
