import { Effect } from "effect"
import { envelopeHashSync } from "../crypto/envelopeHashSync.ts"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { ReceiptStore } from "../../services/ReceiptStore.ts"
import { v3EnvelopeShapeProblem, verifyV3Signature, type V3Envelope } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { isSha256Hex } from "../../sdks/typescript/src/wire/crypto/hex.ts"
import { ApiError, invalidRequest } from "../../src/http/ApiError.ts"
import { countersignAttestation } from "../../sdks/typescript/src/wire/receipts/countersign.ts"
import { decodeEnvelopeHeader } from "../../sdks/typescript/src/wire/receipts/header.ts"
import { CHECK_LABELS, type VerificationCheck, type VerificationResult, verifyReceipt } from "../../sdks/typescript/src/wire/receipts/verify.ts"
import { requireGatewayKey, requirePortal } from "./auth.ts"
import { asApiError } from "./domainErrors.ts"
import { readBodyBytes } from "./body.ts"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const invalidPayload = (message: string) => new ApiError({ status: 400, code: "invalid_payload", message })

const authRequired = (message: string) => new ApiError({ status: 401, code: "auth_required", message })

const decoder = new TextDecoder("utf-8", { fatal: true })

/** An envelope sent as the object itself or as its standard base64 header value; undefined when it is neither. */
const envelopeValue = (value: unknown): Record<string, unknown> | undefined => {
  if (isRecord(value)) return value
  if (typeof value !== "string") return undefined
  try {
    const decoded = decodeEnvelopeHeader(value)
    return isRecord(decoded) ? decoded : undefined
  } catch {
    return undefined
  }
}

/**
 * Shape A: the envelope as the root (it has `v`). Shape B: `{ receipt }`, the envelope or the header value (base64).
 * Shape C: `{ jti }`: a bare id cannot be verified (the caller keeps the full receipt), 401 auth_required.
 */
const envelopeOf = (body: unknown) =>
  Effect.gen(function*() {
    if (!isRecord(body)) return yield* invalidPayload("Send a receipt envelope, { \"receipt\": <envelope> } or { \"jti\": <jti> }.")
    if ("v" in body) return body
    if ("receipt" in body) {
      const receipt = envelopeValue(body.receipt)
      if (receipt !== undefined) return receipt
      return yield* invalidPayload("receipt must be the envelope object or its standard base64 header value.")
    }
    if ("jti" in body) {
      return yield* authRequired(
        "A bare jti is not verified here: send the full receipt (the X-Service-Receipt-V2 value), or look it up with a portal session at GET /api/v1/receipts/{jti}."
      )
    }
    return yield* invalidPayload("Send a receipt envelope, { \"receipt\": <envelope> } or { \"jti\": <jti> }.")
  })

const LINKAGE = CHECK_LABELS[4]

/** Portal routes here answer 401 `auth_required` (the spec's code for the JTI lookup) instead of portal_auth_required. */
const requireReceiptReader = requirePortal(undefined).pipe(
  Effect.mapError(asApiError),
  Effect.catchIf((e) => e.status === 401, (e) => Effect.fail(authRequired(e.message)))
)

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

export const ReceiptRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("POST", "/api/v1/receipts/verify", Effect.gen(function*() {
    const bytes = yield* readBodyBytes
    const body = yield* Effect.try({ try: () => JSON.parse(decoder.decode(bytes)) as unknown, catch: () => invalidPayload("The body is not JSON.") })
    const envelope = yield* envelopeOf(body)
    // Shape B may carry the attestation a countersignature should bind (X-Service-Attestation's value or the object).
    const attestationField = isRecord(body) && "receipt" in body ? body.attestation : undefined
    const attestation = attestationField === undefined ? undefined : envelopeValue(attestationField)
    if (attestationField !== undefined && attestation === undefined) {
      return yield* invalidPayload("attestation must be the v3 envelope object or its standard base64 header value.")
    }
    const keys = yield* ReceiptKeys
    const store = yield* ReceiptStore
    const kid = typeof envelope.kid === "string" ? envelope.kid : undefined
    const key = kid === undefined || envelope.v === "v3" ? undefined : yield* keys.resolveKey(kid)
    const chain = isRecord(envelope.chain) ? envelope.chain : undefined
    const chainId = typeof chain?.chain_id === "string" ? chain.chain_id : undefined
    const seq = typeof chain?.seq === "number" && Number.isSafeInteger(chain.seq) ? chain.seq : undefined
    const before = chainId !== undefined && seq !== undefined && seq > 1 ? yield* store.stored(chainId, seq - 1) : undefined
    let result: VerificationResult = yield* Effect.promise(() =>
      verifyReceipt(envelope, {
        resolveKey: async (k) => (k === kid ? key : undefined),
        nowSeconds: Math.floor(Date.now() / 1000),
        previous: before?._tag === "found" ? before.envelope : undefined,
        attestation
      })
    )
    // A receipt of a chain we hold whose predecessor has been removed: the link cannot be shown, so it fails.
    if (result.valid && before?._tag === "missing") {
      const failed: VerificationCheck = {
        label: LINKAGE,
        status: "fail",
        detail: `receipt seq ${seq! - 1} of ${chainId} is missing from the stored chain`
      }
      result = { valid: false, reason: `${LINKAGE}: ${failed.detail}`, checks: result.checks.map((c) => (c.label === LINKAGE ? failed : c)) }
    }
    return HttpServerResponse.jsonUnsafe(result, { status: result.valid ? 200 : 422 })
  }))

  yield* router.add("GET", "/api/v1/receipts/:jti", Effect.gen(function*() {
    const principal = yield* requireReceiptReader
    const { jti } = yield* HttpRouter.params
    const store = yield* ReceiptStore
    const wellFormed = jti !== undefined && /^[0-9a-f]{32}$/.test(jti)
    const receipt = wellFormed ? yield* store.getV1(principal.orgId, jti) : undefined
    if (receipt === undefined && wellFormed && (yield* store.expired(jti))) {
      return yield* new ApiError({
        status: 410,
        code: "receipt_expired",
        message: "This receipt was removed by the gateway's retention period (RETENTION_DAYS); its transparency leaf remains."
      })
    }
    if (receipt === undefined) return yield* new ApiError({ status: 404, code: "not_found", message: "No receipt with this jti in your organisation." })
    return HttpServerResponse.jsonUnsafe(receipt)
  }))

  yield* router.add("GET", "/api/v1/receipts", Effect.gen(function*() {
    const principal = yield* requireReceiptReader
    const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    const limitText = search.get("limit") ?? "50"
    const limit = Number(limitText)
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > 200) return yield* invalidRequest("limit must be an integer from 1 to 200.", "limit")
    const bound = (name: "from" | "to") => {
      const value = search.get(name) ?? undefined
      if (value !== undefined && (!RFC3339.test(value) || Number.isNaN(Date.parse(value)))) {
        return Effect.fail(invalidRequest(`${name} must be an RFC 3339 timestamp.`, name))
      }
      return Effect.succeed(value)
    }
    const page = yield* (yield* ReceiptStore).listV1(principal.orgId, {
      limit,
      cursor: search.get("cursor") ?? undefined,
      from: yield* bound("from"),
      to: yield* bound("to"),
      model: search.get("model") ?? undefined
    }).pipe(Effect.mapError(() => invalidRequest("cursor is not a cursor this list returned.", "cursor")))
    return HttpServerResponse.jsonUnsafe(page)
  }))

  yield* router.add("POST", "/api/v1/receipts/countersign", Effect.gen(function*() {
    const principal = yield* requireGatewayKey(undefined)
    const bytes = yield* readBodyBytes
    const body = yield* Effect.try({ try: () => JSON.parse(decoder.decode(bytes)) as unknown, catch: () => invalidRequest("The body is not JSON.") })
    if (!isRecord(body)) return yield* invalidRequest("The body must be a JSON object.")
    let attestation: unknown = body.attestation
    if (typeof attestation === "string") {
      attestation = yield* Effect.try({ try: () => decodeEnvelopeHeader(attestation as string), catch: () => undefined }).pipe(
        Effect.orElseSucceed(() => undefined)
      )
    }
    const problem = v3EnvelopeShapeProblem(attestation)
    if (problem !== null) return yield* invalidRequest(`attestation is not a v3 envelope: ${problem}`, "attestation")
    for (const field of ["provider", "model"] as const) {
      if (typeof body[field] !== "string" || body[field] === "") return yield* invalidRequest(`${field} is required.`, field)
    }
    for (const field of ["hash_upstream_request", "hash_upstream_response"] as const) {
      if (!isSha256Hex(body[field])) return yield* invalidRequest(`${field} must be 64 lowercase hex characters.`, field)
    }
    const v3 = attestation as V3Envelope
    if (v3.alg !== "ecdsa-p256-sha256" || !(yield* Effect.promise(() => verifyV3Signature(v3)))) {
      return yield* new ApiError({
        status: 422,
        code: "attestation_invalid",
        message: "The attestation signature does not verify against its attester_public_key."
      })
    }
    if (v3.claims["v3-attestation"].egress_sha256 !== body.hash_upstream_request) {
      return yield* new ApiError({
        status: 422,
        code: "attestation_mismatch",
        message: "hash_upstream_request differs from the attested egress_sha256: the relayed body must be the attested body."
      })
    }
    const call = {
      provider: body.provider as string,
      model: body.model as string,
      hashUpstreamRequest: body.hash_upstream_request as string,
      hashUpstreamResponse: body.hash_upstream_response as string
    }
    const relayed = yield* (yield* ReceiptStore).findRelayed(principal.orgId, call)
    const iss = (yield* AppConfig).publicBaseUrl
    // Signed under the rotation lock with the key current at that moment, never one another process just retired.
    const countersignature = yield* (yield* ReceiptKeys).withCurrent((key) =>
      Effect.promise(() =>
        countersignAttestation({
          attestation: v3,
          ...call,
          iss,
          signer: key.signer,
          witness: relayed === undefined ? "asserted" : "relayed",
          receiptJti: relayed ?? null,
          envelopeHash: envelopeHashSync
        })
      )
    )
    return HttpServerResponse.jsonUnsafe(countersignature)
  }))
}))
