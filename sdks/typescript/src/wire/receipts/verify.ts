// Offline verification of every envelope the gateway hands out (v1, v2, failed v2, the v3 countersignature)
// and of client v3 attestations, as POST /api/v1/receipts/verify answers it. The one copy of this logic:
// the verify route, the chain verifier and verifyCountersignature all call verifyReceipt. Five checks, always
// reported in this order with these exact labels (the spec's strings):
//
//   "schema valid (OpenReceipt v1)"     the envelope has the members and types of its version
//   "algorithm allow-listed"            v2, failed v2 and the countersignature: ES256; v1 and v3: ecdsa-p256-sha256
//   "freshness (iat, nbf, exp)"         iat not more than 300 s in the future; nbf/exp when present
//   "signature"                         raw r||s over the JCS bytes without sig/signature; v1/v2 and the
//                                       countersignature with the key resolved by kid, v3 with its embedded key
//   "chain linkage (seq and prev_hash)" seq positive, prev_hash 64 hex, seq 1 <=> genesis, and, when
//                                       the previous envelope is given, seq + 1 and its envelopeHash. A
//                                       countersignature is not chained: its link is to the attestation it
//                                       countersigns (attestation_jti and attestation_sha256), compared when
//                                       that attestation is given.
//
// Status values: "ok" = the check ran and passed; "fail" = it ran and failed; "skipped" = it was not
// evaluated because an earlier check failed (later checks depend on earlier ones: a signature cannot
// be checked on an envelope whose shape is unknown). The first failure decides `reason`
// ("<label>: <detail>"); a valid receipt has reason null. Old receipts stay valid: freshness rejects
// only the future, because historic receipts must verify indefinitely.
import { base64UrlDecode } from "../crypto/base64.ts"
import { verifyRaw } from "../crypto/ecdsa.ts"
import { isSha256Hex } from "../crypto/hex.ts"
import { v3EnvelopeShapeProblem, verifyV3Signature, type V3Envelope } from "../attestation/v3.ts"
import { countersignatureShapeProblem } from "./countersign.ts"
import { envelopeHash, GENESIS_PREV_HASH } from "./chain.ts"
import { signingInput } from "./signing-input.ts"

export const CHECK_LABELS = [
  "schema valid (OpenReceipt v1)",
  "algorithm allow-listed",
  "freshness (iat, nbf, exp)",
  "signature",
  "chain linkage (seq and prev_hash)"
] as const

export type CheckLabel = (typeof CHECK_LABELS)[number]
export type CheckStatus = "ok" | "fail" | "skipped"

export interface VerificationCheck {
  readonly label: CheckLabel
  readonly status: CheckStatus
  readonly detail: string
}

export interface VerificationResult {
  readonly valid: boolean
  readonly reason: string | null
  readonly checks: ReadonlyArray<VerificationCheck>
}

export interface VerifyReceiptOptions {
  /** The JWKS key for a kid (current or rotated-out); undefined when unknown. Unused for v3. */
  readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined>
  readonly nowSeconds: number
  /** The envelope immediately before this one in its chain, when the caller has it. */
  readonly previous?: unknown
  /** For a countersignature: the v3 attestation it should countersign, when the caller has it. */
  readonly attestation?: unknown
}

/** Clock skew tolerated for iat and nbf, in seconds. */
export const RECEIPT_MAX_SKEW_SECONDS = 300

type Kind = "v1" | "v2" | "v2-failed" | "v3" | "v3-countersignature"
type Envelope = Record<string, unknown>

const EXPECTED_ALG: Record<Kind, string> = {
  v1: "ecdsa-p256-sha256",
  v2: "ES256",
  "v2-failed": "ES256",
  v3: "ecdsa-p256-sha256",
  "v3-countersignature": "ES256"
}

const CHAIN_ID_PREFIX: Record<Exclude<Kind, "v3" | "v3-countersignature">, string> = {
  v1: "tenant-",
  v2: "receipt-v2-org-",
  "v2-failed": "failed-v2-org-"
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const isString = (value: unknown): value is string => typeof value === "string"
const isNonEmptyString = (value: unknown): value is string => typeof value === "string" && value.length > 0
const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0
const isHashOrNull = (value: unknown): boolean => value === null || isSha256Hex(value)
const isStringOrNull = (value: unknown): boolean => value === null || typeof value === "string"
const RFC3339_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Members shared by v1 and v2 envelopes; returns the first problem or null. */
const commonProblem = (e: Envelope): string | null => {
  if (!isString(e.alg)) return "alg must be a string"
  if (!isNonEmptyString(e.kid)) return "kid must be a non-empty string"
  if (!isNonEmptyString(e.iss)) return "iss must be a non-empty string"
  if (!isString(e.jti) || !/^[0-9a-f]{32}$/.test(e.jti)) return "jti must be 32 lowercase hex"
  if (!isCount(e.iat)) return "iat must be a non-negative integer (Unix seconds)"
  if (e.nbf !== undefined && !Number.isSafeInteger(e.nbf)) return "nbf must be an integer when present"
  if (e.exp !== undefined && !Number.isSafeInteger(e.exp)) return "exp must be an integer when present"
  const chain = e.chain
  if (!isRecord(chain)) return "chain must be an object"
  if (!isNonEmptyString(chain.chain_id)) return "chain.chain_id must be a non-empty string"
  if (typeof chain.seq !== "number") return "chain.seq must be a number"
  if (!isString(chain.prev_hash)) return "chain.prev_hash must be a string"
  if (!isNonEmptyString(e.sig)) return "sig must be a non-empty string"
  return null
}

const v2Problem = (e: Envelope, failed: boolean): string | null => {
  const common = commonProblem(e)
  if (common !== null) return common
  if (!isNonEmptyString(e.signature)) return "signature must be a non-empty string"
  if (!isString(e.timestamp) || !RFC3339_MILLIS_UTC.test(e.timestamp)) {
    return "timestamp must be RFC 3339 UTC with milliseconds"
  }
  if (!isRecord(e.extensions) || !isString(e.extensions.request_id)) return "extensions.request_id must be a string"
  if (failed) {
    if (!Number.isSafeInteger(e.status) || (e.status as number) < 400 || (e.status as number) > 599) {
      return "status must be an HTTP error status (400-599)"
    }
    if (!isNonEmptyString(e.error_code)) return "error_code must be a non-empty string"
    if (e.input_tokens !== undefined || e.output_tokens !== undefined) return "a failed receipt carries no token counts"
    for (const member of ["request_id", "provider", "model"] as const) {
      if (!isStringOrNull(e[member])) return `${member} must be a string or null`
    }
    if (!isHashOrNull(e.hash_upstream_request)) return "hash_upstream_request must be 64 lowercase hex or null"
    if (!isHashOrNull(e.hash_upstream_response)) return "hash_upstream_response must be 64 lowercase hex or null"
    return null
  }
  if (!isString(e.request_id)) return "request_id must be a string"
  if (!isNonEmptyString(e.provider)) return "provider must be a non-empty string"
  if (!isNonEmptyString(e.model)) return "model must be a non-empty string"
  if (!isCount(e.input_tokens)) return "input_tokens must be a non-negative integer"
  if (!isCount(e.output_tokens)) return "output_tokens must be a non-negative integer"
  if (!isSha256Hex(e.hash_upstream_request)) return "hash_upstream_request must be 64 lowercase hex"
  if (!isSha256Hex(e.hash_upstream_response)) return "hash_upstream_response must be 64 lowercase hex"
  if (e.routing_decision !== undefined) {
    const r = e.routing_decision
    if (!isRecord(r)) return "routing_decision must be an object when present"
    for (const member of ["from", "to", "chosen_model", "classifier", "strategy"] as const) {
      if (!isString(r[member])) return `routing_decision.${member} must be a string`
    }
    if (typeof r.savings_pct !== "number") return "routing_decision.savings_pct must be a number"
    if ("provider_id" in r) return "routing_decision has no provider_id member"
  }
  return null
}

const v1Problem = (e: Envelope): string | null => {
  const common = commonProblem(e)
  if (common !== null) return common
  if (!isNonEmptyString(e.sub)) return "sub must be a non-empty string"
  const c = e.claims
  if (!isRecord(c)) return "claims must be an object"
  for (const member of ["capability", "provider", "model", "tokenisation_mode"] as const) {
    if (!isNonEmptyString(c[member])) return `claims.${member} must be a non-empty string`
  }
  if (!isCount(c.tokens_in)) return "claims.tokens_in must be a non-negative integer"
  if (!isCount(c.tokens_out)) return "claims.tokens_out must be a non-negative integer"
  if (!isSha256Hex(c.hash_upstream_request)) return "claims.hash_upstream_request must be 64 lowercase hex"
  if (!isSha256Hex(c.hash_upstream_response)) return "claims.hash_upstream_response must be 64 lowercase hex"
  if (c.routing_decision !== null) {
    const r = c.routing_decision
    if (!isRecord(r)) return "claims.routing_decision must be an object or null"
    for (const member of ["from", "to", "chosen_model", "strategy", "classifier"] as const) {
      if (!isString(r[member])) return `claims.routing_decision.${member} must be a string`
    }
  }
  if (!isStringOrNull(c.engine_version)) return "claims.engine_version must be a string or null"
  return null
}

/** The envelope's version, or a schema problem. */
const classify = (value: unknown): { kind: Kind; envelope: Envelope } | { problem: string } => {
  if (!isRecord(value)) return { problem: "envelope is not a JSON object" }
  let kind: Kind
  let problem: string | null
  if (value.v === 2) {
    if (value.outcome !== undefined && value.outcome !== "failed") return { problem: "outcome must be \"failed\" when present" }
    kind = value.outcome === "failed" ? "v2-failed" : "v2"
    problem = v2Problem(value, kind === "v2-failed")
  } else if (value.v === "v1") {
    kind = "v1"
    problem = v1Problem(value)
  } else if (value.v === "v3") {
    kind = "v3"
    problem = v3EnvelopeShapeProblem(value)
  } else if (value.v === "v3-countersignature") {
    kind = "v3-countersignature"
    problem = countersignatureShapeProblem(value)
  } else {
    return { problem: "unknown envelope version (v must be \"v1\", 2, \"v3\" or \"v3-countersignature\")" }
  }
  return problem === null ? { kind, envelope: value } : { problem: `${kind} envelope: ${problem}` }
}

type Outcome = { readonly ok: true; readonly detail: string } | { readonly ok: false; readonly detail: string }
const pass = (detail: string): Outcome => ({ ok: true, detail })
const fail = (detail: string): Outcome => ({ ok: false, detail })

const checkFreshness = (e: Envelope, nowSeconds: number): Outcome => {
  const iat = e.iat as number
  if (iat > nowSeconds + RECEIPT_MAX_SKEW_SECONDS) {
    return fail(`iat is ${iat - nowSeconds} s in the future (more than ${RECEIPT_MAX_SKEW_SECONDS} s)`)
  }
  if (typeof e.nbf === "number" && nowSeconds + RECEIPT_MAX_SKEW_SECONDS < e.nbf) return fail("not yet valid (nbf)")
  if (typeof e.exp === "number" && nowSeconds >= e.exp) return fail("expired (exp)")
  return pass("iat not in the future" + (e.nbf !== undefined || e.exp !== undefined ? "; nbf/exp respected" : ""))
}

const checkSignature = async (kind: Kind, e: Envelope, options: VerifyReceiptOptions): Promise<Outcome> => {
  if (kind === "v3") {
    return (await verifyV3Signature(e as unknown as V3Envelope))
      ? pass("verified with the embedded attester_public_key")
      : fail("does not verify with the embedded attester_public_key")
  }
  if ((kind === "v2" || kind === "v2-failed") && e.signature !== e.sig) return fail("signature and sig differ")
  let signature: Uint8Array
  try {
    signature = base64UrlDecode(e.sig as string)
  } catch {
    return fail("sig is not base64url without padding")
  }
  if (signature.length !== 64) return fail("sig is not a 64-byte raw r||s signature")
  let key: CryptoKey | undefined
  try {
    key = await options.resolveKey(e.kid as string)
  } catch {
    return fail("verification key lookup failed")
  }
  if (key === undefined) return fail(`no published verification key has kid ${e.kid as string}`)
  return (await verifyRaw(key, signature, signingInput(e)))
    ? pass(`verified with key ${e.kid as string}`)
    : fail(`does not verify with key ${e.kid as string}`)
}

/** A countersignature's link: the attestation it names, by jti and by the hash of its JCS bytes. */
const checkAttestationBinding = async (e: Envelope, attestation: unknown): Promise<Outcome> => {
  if (attestation === undefined) return pass(`countersigns attestation ${e.attestation_jti as string}; attestation not supplied, binding not compared`)
  if (!isRecord(attestation)) return fail("the supplied attestation is not an envelope")
  if (attestation.jti !== e.attestation_jti) return fail(`countersigns attestation ${e.attestation_jti as string}, not ${String(attestation.jti)}`)
  if ((await envelopeHash(attestation)) !== e.attestation_sha256) return fail("attestation_sha256 is not the hash of the supplied attestation")
  return pass(`countersigns the supplied attestation ${e.attestation_jti as string}`)
}

const checkChainLinkage = async (kind: Kind, e: Envelope, options: VerifyReceiptOptions): Promise<Outcome> => {
  const previous = options.previous
  if (kind === "v3") return pass("not applicable: v3 attestations are client-signed and not chained")
  if (kind === "v3-countersignature") return checkAttestationBinding(e, options.attestation)
  const chain = e.chain as { chain_id: string; seq: number; prev_hash: string }
  const prefix = CHAIN_ID_PREFIX[kind]
  if (!chain.chain_id.startsWith(prefix) || chain.chain_id.length === prefix.length) {
    return fail(`chain_id of a ${kind} receipt must be ${prefix}<id>`)
  }
  if (!Number.isSafeInteger(chain.seq) || chain.seq < 1) return fail("seq must be a positive integer")
  if (!isSha256Hex(chain.prev_hash)) return fail("prev_hash must be 64 lowercase hex")
  if (chain.seq === 1 && chain.prev_hash !== GENESIS_PREV_HASH) return fail("seq 1 must carry the genesis prev_hash")
  if (chain.seq > 1 && chain.prev_hash === GENESIS_PREV_HASH) return fail("only seq 1 may carry the genesis prev_hash")
  if (previous === undefined) return pass(`seq ${chain.seq}; previous receipt not supplied, link not compared`)
  if (!isRecord(previous) || !isRecord(previous.chain)) return fail("the supplied previous receipt has no chain")
  const before = previous.chain
  if (before.chain_id !== chain.chain_id) return fail("previous receipt belongs to another chain")
  if (before.seq !== chain.seq - 1) return fail(`seq ${chain.seq} does not follow previous seq ${String(before.seq)}`)
  if ((await envelopeHash(previous)) !== chain.prev_hash) return fail("prev_hash is not the hash of the previous receipt")
  return pass(`seq ${chain.seq} follows seq ${chain.seq - 1} and prev_hash matches`)
}

/** Verifies one envelope; see the file comment for the checks and statuses. Never throws. */
export const verifyReceipt = async (envelope: unknown, options: VerifyReceiptOptions): Promise<VerificationResult> => {
  const checks: Array<VerificationCheck> = []
  let failure: VerificationCheck | undefined
  const record = (label: CheckLabel, outcome: Outcome): boolean => {
    const check: VerificationCheck = { label, status: outcome.ok ? "ok" : "fail", detail: outcome.detail }
    checks.push(check)
    if (!outcome.ok) failure = check
    return outcome.ok
  }
  const finish = (): VerificationResult => {
    for (const label of CHECK_LABELS.slice(checks.length)) {
      checks.push({ label, status: "skipped", detail: "not evaluated: an earlier check failed" })
    }
    return { valid: failure === undefined, reason: failure ? `${failure.label}: ${failure.detail}` : null, checks }
  }

  const classified = classify(envelope)
  if ("problem" in classified) {
    record("schema valid (OpenReceipt v1)", fail(classified.problem))
    return finish()
  }
  const { kind, envelope: e } = classified
  record("schema valid (OpenReceipt v1)", pass(`${kind} envelope`))
  if (!record("algorithm allow-listed", e.alg === EXPECTED_ALG[kind] ? pass(e.alg) : fail(`${String(e.alg)} is not allowed for ${kind}; expected ${EXPECTED_ALG[kind]}`))) {
    return finish()
  }
  if (!record("freshness (iat, nbf, exp)", checkFreshness(e, options.nowSeconds))) return finish()
  if (!record("signature", await checkSignature(kind, e, options))) return finish()
  try {
    record("chain linkage (seq and prev_hash)", await checkChainLinkage(kind, e, options))
  } catch {
    record("chain linkage (seq and prev_hash)", fail("the previous receipt or the attestation cannot be canonicalised"))
  }
  return finish()
}

/**
 * True when a countersignature verifies with the receipt key its kid names and, when the attestation is given,
 * countersigns exactly that attestation: verifyReceipt's checks, as a boolean.
 */
export const verifyCountersignature = async (
  countersignature: unknown,
  options: { readonly resolveKey: VerifyReceiptOptions["resolveKey"]; readonly attestation?: unknown; readonly nowSeconds?: number }
): Promise<boolean> => {
  if (!isRecord(countersignature) || countersignature.v !== "v3-countersignature") return false
  const result = await verifyReceipt(countersignature, {
    resolveKey: options.resolveKey,
    attestation: options.attestation,
    nowSeconds: options.nowSeconds ?? Math.floor(Date.now() / 1000)
  })
  return result.valid
}
