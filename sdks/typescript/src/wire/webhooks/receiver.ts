// Receiver side: what a webhook consumer runs to authenticate a delivery and drop duplicates.
// Portable (WebCrypto, no node: imports) so the SDK can export it for Node, Deno and browsers.
import { constantTimeEqual, hmacSha256Hex } from "./hmac.ts"
import { canonicalJson } from "./payload.ts"

/** The spec's replay window: |t - receiver clock| must not exceed 300 seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300

export type VerifyFailureReason =
  | "missing_header"
  | "malformed_header"
  | "no_signature"
  | "signature_mismatch"
  | "timestamp_out_of_tolerance"
  | "malformed_body"

export type VerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: VerifyFailureReason }

export type VerifyV1Input = {
  /** Value of X-Service-Signature, e.g. `t=1700000000,v1=ab12...` (several v1= entries allowed). */
  readonly header: string | null | undefined
  /** The request body exactly as received, before any JSON parsing. */
  readonly rawBody: string
  readonly secret: string
  /** The receiver's clock, Unix seconds. */
  readonly nowSeconds: number
  readonly toleranceSeconds?: number
}

const HEX_SHA256 = /^[0-9a-f]{64}$/

/**
 * Verifies the v1 scheme. The signature is checked before the clock so that a forged header
 * reports `signature_mismatch` and a genuine but old one reports `timestamp_out_of_tolerance`.
 */
export const verifyV1 = async (input: VerifyV1Input): Promise<VerifyResult> => {
  const { header, rawBody, secret, nowSeconds, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS } = input
  if (header === null || header === undefined || header.trim() === "") return failure("missing_header")
  let timestamp: string | undefined
  const candidates: string[] = []
  for (const item of header.split(",")) {
    const separator = item.indexOf("=")
    if (separator <= 0) return failure("malformed_header")
    const name = item.slice(0, separator).trim()
    const value = item.slice(separator + 1).trim()
    if (name === "t") {
      // Exactly one decimal timestamp: two would let an attacker pair one with a replayed signature.
      if (timestamp !== undefined || !/^[0-9]{1,15}$/.test(value)) return failure("malformed_header")
      timestamp = value
    } else if (name === "v1") {
      candidates.push(value.toLowerCase())
    }
    // Other schemes (e.g. a future v2) are ignored, as Stripe-style receivers do.
  }
  if (timestamp === undefined) return failure("malformed_header")
  if (candidates.length === 0) return failure("no_signature")
  const expected = await hmacSha256Hex(secret, `${timestamp}.${rawBody}`)
  // Compare against every candidate without stopping at the first match, so timing does not reveal which one matched.
  let matched = false
  for (const candidate of candidates) {
    if (HEX_SHA256.test(candidate) && constantTimeEqual(candidate, expected)) matched = true
  }
  if (!matched) return failure("signature_mismatch")
  return withinTolerance(Number(timestamp), nowSeconds, toleranceSeconds) ? OK : failure("timestamp_out_of_tolerance")
}

export type VerifyV0Input = {
  /** Value of X-Service-Webhook-Signature, `sha256=<hex>`. */
  readonly header: string | null | undefined
  /** The request body as received; it is parsed and re-canonicalised (JCS) before hashing. */
  readonly rawBody: string
  readonly secret: string
  readonly nowSeconds: number
  readonly toleranceSeconds?: number
}

/**
 * Verifies the legacy v0 scheme: HMAC over the canonical JSON payload. v0 has no timestamp in the
 * header, so replay protection comes from the payload's own `timestamp` field, which is required.
 */
export const verifyV0 = async (input: VerifyV0Input): Promise<VerifyResult> => {
  const { header, rawBody, secret, nowSeconds, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS } = input
  if (header === null || header === undefined || header.trim() === "") return failure("missing_header")
  const match = /^sha256=([0-9a-fA-F]+)$/.exec(header.trim())
  if (match === null) return failure("malformed_header")
  let payload: unknown
  let canonical: string
  try {
    payload = JSON.parse(rawBody)
    canonical = canonicalJson(payload)
  } catch {
    return failure("malformed_body")
  }
  const expected = await hmacSha256Hex(secret, canonical)
  if (!constantTimeEqual(match[1]!.toLowerCase(), expected)) return failure("signature_mismatch")
  const timestamp = typeof payload === "object" && payload !== null ? (payload as { timestamp?: unknown }).timestamp : undefined
  if (typeof timestamp !== "number" || !Number.isSafeInteger(timestamp)) return failure("malformed_body")
  return withinTolerance(timestamp, nowSeconds, toleranceSeconds) ? OK : failure("timestamp_out_of_tolerance")
}

/** Absolute difference, per the spec: a timestamp too far in the future is refused like a stale one. */
const withinTolerance = (timestamp: number, nowSeconds: number, toleranceSeconds: number): boolean =>
  Math.abs(nowSeconds - timestamp) <= toleranceSeconds

const OK: VerifyResult = { ok: true }
const failure = (reason: VerifyFailureReason): VerifyResult => ({ ok: false, reason })

export const DEFAULT_DEDUPE_TTL_MS = 24 * 60 * 60 * 1000

export type Deduper = {
  /**
   * True when this Idempotency-Key was already seen within the TTL (answer 2xx and skip the work);
   * otherwise records it and returns false. Call only after the signature verified, so unsigned
   * traffic cannot fill the memory.
   */
  readonly seen: (idempotencyKey: string) => boolean
  /** Number of keys currently remembered. */
  readonly size: () => number
}

/**
 * In-memory dedupe for a single receiver process. Keys are kept from first sight for `ttlMs`
 * (default 24 hours, the spec's minimum); a repeat does not extend the window, which keeps the map
 * in expiry order so expired keys are pruned from the front cheaply.
 */
export const createDeduper = (options: { readonly ttlMs?: number; readonly now?: () => number } = {}): Deduper => {
  const ttlMs = options.ttlMs ?? DEFAULT_DEDUPE_TTL_MS
  const now = options.now ?? Date.now
  const firstSeenAt = new Map<string, number>()
  const prune = (at: number): void => {
    for (const [key, seenAt] of firstSeenAt) {
      if (at - seenAt < ttlMs) break
      firstSeenAt.delete(key)
    }
  }
  return {
    seen: (idempotencyKey) => {
      const at = now()
      prune(at)
      if (firstSeenAt.has(idempotencyKey)) return true
      firstSeenAt.set(idempotencyKey, at)
      return false
    },
    size: () => firstSeenAt.size
  }
}
