// Webhook receivers: authenticate a delivery (v1 `X-Service-Signature` preferred, v0 `X-Service-Webhook-Signature`
// when v1 is absent) and drop duplicates by event_id. The schemes themselves are sdks/typescript/src/wire/webhooks/receiver.ts (the one
// copy, constant-time comparison included); this maps their verdicts to a thrown WebhookVerificationError.
import { createDeduper, DEFAULT_TOLERANCE_SECONDS, verifyV0, verifyV1, type VerifyFailureReason } from "../wire/webhooks/receiver.ts"
import { WebhookVerificationError, type WebhookVerificationCode } from "./errors.ts"

export { DEFAULT_DEDUPE_TTL_MS, DEFAULT_TOLERANCE_SECONDS } from "../wire/webhooks/receiver.ts"

/** Headers as fetch (Headers), Node (IncomingHttpHeaders) or a plain record give them; names are case-insensitive. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface VerifyWebhookInput {
  /** The body exactly as received, before any JSON parsing: text or bytes. */
  readonly body: string | Uint8Array
  readonly headers: WebhookHeaders
  /** The endpoint's signing secret. */
  readonly secret: string
  /** Largest accepted |timestamp - now| in seconds. Default 300 (the spec's replay window). */
  readonly toleranceSeconds?: number
  /** The receiver's clock in Unix seconds. Default: now. */
  readonly nowSeconds?: number
}

const CODES: Record<VerifyFailureReason, WebhookVerificationCode> = {
  missing_header: "missing_headers",
  malformed_header: "malformed_header",
  no_signature: "malformed_header",
  signature_mismatch: "bad_signature",
  timestamp_out_of_tolerance: "stale_timestamp",
  malformed_body: "malformed_body"
}

const MESSAGES: Record<WebhookVerificationCode, string> = {
  missing_headers: "the delivery carries neither X-Service-Signature nor X-Service-Webhook-Signature",
  malformed_header: "the signature header is not in its scheme's form (t=<unix>,v1=<hex> or sha256=<hex>)",
  bad_signature: "the signature does not match the body under this secret (tampered body, or a wrong or rotated secret)",
  stale_timestamp: "the signature is genuine but its timestamp is outside the tolerance: a stale or replayed delivery",
  malformed_body: "the body is not UTF-8 JSON with an integer timestamp",
  missing_secret: "no webhook secret was given"
}

const fail = (code: WebhookVerificationCode, scheme?: "v1" | "v0"): never => {
  throw new WebhookVerificationError(code, scheme === undefined ? MESSAGES[code] : `${scheme}: ${MESSAGES[code]}`)
}

/** One header's value, case-insensitively; the first when repeated. */
export const headerValue = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers as Record<string, string | ReadonlyArray<string> | undefined>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue
    return typeof value === "string" ? value : value[0]
  }
  return undefined
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * True when the delivery is authentic and fresh; otherwise throws WebhookVerificationError with a stable code
 * (missing_headers, malformed_header, bad_signature, stale_timestamp, malformed_body, missing_secret). v1 is used
 * whenever its header is present (a failing v1 is not retried as v0); v0 only for senders that send v0 alone, with
 * the payload's own `timestamp` as its clock. Verify before parsing the body, and dedupe only after this passes.
 */
export const verifyWebhook = async (input: VerifyWebhookInput): Promise<true> => {
  if (typeof input.secret !== "string" || input.secret === "") fail("missing_secret")
  let rawBody: string
  try {
    rawBody = typeof input.body === "string" ? input.body : strictUtf8.decode(input.body)
  } catch {
    return fail("malformed_body")
  }
  const common = {
    rawBody,
    secret: input.secret,
    nowSeconds: input.nowSeconds ?? Math.floor(Date.now() / 1000),
    toleranceSeconds: input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  }
  const v1 = headerValue(input.headers, "x-service-signature")
  const v0 = headerValue(input.headers, "x-service-webhook-signature")
  const present = (value: string | undefined) => value !== undefined && value.trim() !== ""
  if (!present(v1) && !present(v0)) return fail("missing_headers")
  const scheme = present(v1) ? "v1" : "v0"
  const verdict = scheme === "v1" ? await verifyV1({ header: v1, ...common }) : await verifyV0({ header: v0, ...common })
  if (!verdict.ok) return fail(CODES[verdict.reason], scheme)
  return true
}

export interface WebhookDeduper {
  /**
   * True when this event_id was already seen within the TTL: answer 2xx and skip the work. Otherwise records it and
   * answers false. Call after verifyWebhook passed, so unsigned traffic cannot fill the memory.
   */
  readonly seen: (eventId: string) => boolean
  /** The event id of a delivery: Idempotency-Key, else X-Service-Webhook-Event-Id, else the body's event_id. */
  readonly eventIdOf: (delivery: { readonly body: string | Uint8Array; readonly headers: WebhookHeaders }) => string | undefined
  /** Event ids currently remembered. */
  readonly size: () => number
}

/**
 * In-memory dedupe keyed by event_id for one receiver process; ids are remembered for `ttlMs` from first sight
 * (default 24 hours, the spec's minimum). Several processes need a shared store instead (e.g. a unique index).
 */
export const createWebhookDeduper = (options: { readonly ttlMs?: number; readonly now?: () => number } = {}): WebhookDeduper => {
  const deduper = createDeduper(options)
  return {
    seen: (eventId) => {
      if (typeof eventId !== "string" || eventId === "") throw new TypeError("createWebhookDeduper: seen() needs a non-empty event_id")
      return deduper.seen(eventId)
    },
    eventIdOf: ({ body, headers }) => {
      const fromHeader = headerValue(headers, "idempotency-key") ?? headerValue(headers, "x-service-webhook-event-id")
      if (fromHeader !== undefined && fromHeader !== "") return fromHeader
      try {
        const parsed = JSON.parse(typeof body === "string" ? body : strictUtf8.decode(body)) as { event_id?: unknown }
        return typeof parsed.event_id === "string" && parsed.event_id !== "" ? parsed.event_id : undefined
      } catch {
        return undefined
      }
    },
    size: deduper.size
  }
}
