// The transparency log's wire format (docs/receipts.md, "Transparency log"): the signed tree head of
// GET /api/v1/transparency/sth, the inclusion proof of GET /api/v1/transparency/proof/{jti}, and their offline
// verification. The one copy: the gateway builds these shapes, the SDK verifies them. Portable (WebCrypto).
//
// Checks, always reported in this order with these labels:
//   "signed tree head"   the head has its members and types, alg ES256, and `sig` verifies with the receipt key
//                        its kid names (same JWKS as the receipts)
//   "proof schema"       the proof has its members and types and is for the head's tree size
//   "leaf hash"          leaf_hash = SHA-256(0x00 || receipt_hash bytes); when the receipt is given, receipt_hash is
//                        its envelope hash and receipt_id its jti
//   "inclusion"          the audit path leads from the leaf to the head's root_hash (RFC 9162 section 2.1.3.2)
// Status values and `reason` follow verifyReceipt's rules: the first failure decides the reason
// ("<label>: <detail>") and later checks are "skipped".
//
// Consistency proofs (GET /api/v1/transparency/consistency, RFC 9162 section 2.1.4): a tree head seen earlier (kept
// by the client) and a newer one; checks, in this order:
//   "old tree head"      the head kept earlier has its members and types and `sig` verifies (its key stays published)
//   "new tree head"      the same for the newer head, which must be of the same log (`iss`)
//   "proof schema"       the proof has its members and types and goes from the old head's size to the new head's; a
//                        new head smaller than the old one is a rollback; an old head of 0 leaves needs no proof
//   "consistency"        the consistency path leads from the old root to the new root (RFC 9162 section 2.1.4.2): the
//                        new tree extends the old one; otherwise the log forked
import { base64UrlDecode } from "../crypto/base64.ts"
import { verifyRaw } from "../crypto/ecdsa.ts"
import { bytesToHex, hexToBytes, isSha256Hex } from "../crypto/hex.ts"
import { envelopeHash } from "./chain.ts"
import { receiptLeafHash, verifyConsistency, verifyInclusion } from "./merkle.ts"
import { signingInput } from "./signing-input.ts"

/** RFC 9162-style signed tree head. `sig` covers the JCS bytes without `sig`, with the receipt key `kid`. */
export interface SignedTreeHead {
  readonly v: "transparency-sth-v1"
  readonly alg: "ES256"
  readonly kid: string
  /** The log's identity: the gateway's PUBLIC_BASE_URL. */
  readonly iss: string
  readonly tree_size: number
  /** Hex. */
  readonly root_hash: string
  /** RFC 3339 with milliseconds. */
  readonly timestamp: string
  readonly sig: string
}

export interface InclusionProof {
  /** The receipt jti (the log calls it receipt_id). */
  readonly receipt_id: string
  readonly leaf_index: number
  readonly tree_size: number
  /** envelopeHash of the logged receipt (hex). */
  readonly receipt_hash: string
  /** SHA-256(0x00 || receipt_hash bytes), hex. */
  readonly leaf_hash: string
  /** RFC 9162 audit path, hex, leaf to root. */
  readonly audit_path: ReadonlyArray<string>
  /** The signed head of the tree the proof is for. */
  readonly sth: SignedTreeHead
}

export const TRANSPARENCY_CHECK_LABELS = ["signed tree head", "proof schema", "leaf hash", "inclusion"] as const

export type TransparencyCheckLabel = (typeof TRANSPARENCY_CHECK_LABELS)[number]

export interface TransparencyCheck {
  readonly label: TransparencyCheckLabel
  readonly status: "ok" | "fail" | "skipped"
  readonly detail: string
}

export interface InclusionVerification {
  readonly valid: boolean
  readonly reason: string | null
  readonly checks: ReadonlyArray<TransparencyCheck>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

/** Why `value` is not a signed tree head, or null. */
export const treeHeadShapeProblem = (value: unknown): string | null => {
  if (!isRecord(value)) return "the tree head is not a JSON object"
  if (value.v !== "transparency-sth-v1") return "v must be \"transparency-sth-v1\""
  if (value.alg !== "ES256") return `alg ${String(value.alg)} is not allowed; expected ES256`
  if (typeof value.kid !== "string" || value.kid === "") return "kid must be a non-empty string"
  if (typeof value.iss !== "string") return "iss must be a string"
  if (!isCount(value.tree_size)) return "tree_size must be a non-negative integer"
  if (!isSha256Hex(value.root_hash)) return "root_hash must be 64 lowercase hex"
  if (typeof value.timestamp !== "string") return "timestamp must be a string"
  if (typeof value.sig !== "string" || value.sig === "") return "sig must be a non-empty string"
  return null
}

/** Why `value` is not an inclusion proof, or null. */
export const inclusionProofShapeProblem = (value: unknown): string | null => {
  if (!isRecord(value)) return "the proof is not a JSON object"
  if (typeof value.receipt_id !== "string" || !/^[0-9a-f]{32}$/.test(value.receipt_id)) return "receipt_id must be 32 lowercase hex"
  if (!isCount(value.leaf_index)) return "leaf_index must be a non-negative integer"
  if (!isCount(value.tree_size)) return "tree_size must be a non-negative integer"
  if (!isSha256Hex(value.receipt_hash)) return "receipt_hash must be 64 lowercase hex"
  if (!isSha256Hex(value.leaf_hash)) return "leaf_hash must be 64 lowercase hex"
  if (!Array.isArray(value.audit_path) || !value.audit_path.every(isSha256Hex)) return "audit_path must be an array of 64 lowercase hex"
  if (value.leaf_index >= value.tree_size) return `leaf_index ${value.leaf_index} is not in a tree of ${value.tree_size}`
  return null
}

type Outcome = { readonly ok: boolean; readonly detail: string }

const checkTreeHead = async (sth: unknown, resolveKey: (kid: string) => Promise<CryptoKey | undefined>): Promise<Outcome> => {
  const problem = treeHeadShapeProblem(sth)
  if (problem !== null) return { ok: false, detail: problem }
  const head = sth as unknown as SignedTreeHead
  let signature: Uint8Array
  try {
    signature = base64UrlDecode(head.sig)
  } catch {
    return { ok: false, detail: "sig is not base64url without padding" }
  }
  const key = await resolveKey(head.kid)
  if (key === undefined) return { ok: false, detail: `no published verification key has kid ${head.kid}` }
  return (await verifyRaw(key, signature, signingInput(head)))
    ? { ok: true, detail: `tree size ${head.tree_size}, verified with key ${head.kid}` }
    : { ok: false, detail: `does not verify with key ${head.kid}` }
}

/**
 * A signed tree head on its own: its members and types, and `sig` with the key its kid names. `reason` is null when
 * it verifies. Never throws, except when `resolveKey` throws.
 */
export const verifyTreeHead = async (
  sth: unknown,
  options: { readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined> }
): Promise<{ readonly valid: boolean; readonly reason: string | null }> => {
  const outcome = await checkTreeHead(sth, options.resolveKey)
  return { valid: outcome.ok, reason: outcome.ok ? null : `signed tree head: ${outcome.detail}` }
}

/**
 * Verifies an inclusion proof against a signed tree head, offline; see the file comment for the checks. The
 * optional receipt (the envelope object) ties the proof to it. Never throws, except when `resolveKey` throws
 * (a JWKS that cannot be fetched is the caller's error to report, not a verdict on the proof).
 */
export const verifyInclusionProof = async (
  proof: unknown,
  sth: unknown,
  options: { readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined>; readonly receipt?: unknown }
): Promise<InclusionVerification> => {
  const checks: Array<TransparencyCheck> = []
  const finish = (): InclusionVerification => {
    const failure = checks.find((c) => c.status === "fail")
    for (const label of TRANSPARENCY_CHECK_LABELS.slice(checks.length)) {
      checks.push({ label, status: "skipped", detail: "not evaluated: an earlier check failed" })
    }
    return { valid: failure === undefined, reason: failure ? `${failure.label}: ${failure.detail}` : null, checks }
  }
  const record = (label: TransparencyCheckLabel, outcome: Outcome): boolean => {
    checks.push({ label, status: outcome.ok ? "ok" : "fail", detail: outcome.detail })
    return outcome.ok
  }

  if (!record("signed tree head", await checkTreeHead(sth, options.resolveKey))) return finish()
  const head = sth as SignedTreeHead
  const problem = inclusionProofShapeProblem(proof)
  if (problem !== null) {
    record("proof schema", { ok: false, detail: problem })
    return finish()
  }
  const p = proof as InclusionProof
  if (!record("proof schema", p.tree_size === head.tree_size
    ? { ok: true, detail: `leaf ${p.leaf_index} of ${p.tree_size}` }
    : { ok: false, detail: `the proof is for tree size ${p.tree_size}, the tree head for ${head.tree_size}` })) {
    return finish()
  }
  const leafOutcome = async (): Promise<Outcome> => {
    if (bytesToHex(await receiptLeafHash(p.receipt_hash)) !== p.leaf_hash) {
      return { ok: false, detail: "leaf_hash is not SHA-256(0x00 || receipt_hash)" }
    }
    if (options.receipt === undefined) return { ok: true, detail: "receipt not supplied, receipt_hash not compared" }
    if (!isRecord(options.receipt)) return { ok: false, detail: "the supplied receipt is not an envelope" }
    if (options.receipt.jti !== p.receipt_id) return { ok: false, detail: `the proof is for receipt ${p.receipt_id}, not ${String(options.receipt.jti)}` }
    try {
      if ((await envelopeHash(options.receipt)) !== p.receipt_hash) return { ok: false, detail: "receipt_hash is not the hash of the supplied receipt" }
    } catch {
      return { ok: false, detail: "the supplied receipt cannot be canonicalised" }
    }
    return { ok: true, detail: `receipt_hash is the hash of the supplied receipt ${p.receipt_id}` }
  }
  if (!record("leaf hash", await leafOutcome())) return finish()
  const included = await verifyInclusion({
    leafHash: hexToBytes(p.leaf_hash),
    index: p.leaf_index,
    treeSize: p.tree_size,
    auditPath: p.audit_path.map(hexToBytes),
    rootHash: hexToBytes(head.root_hash)
  })
  record("inclusion", included
    ? { ok: true, detail: `the audit path leads to root ${head.root_hash}` }
    : { ok: false, detail: "the audit path does not lead to the tree head's root_hash" })
  return finish()
}

/** GET /api/v1/transparency/consistency?first=M&second=N: the proof that the tree of M leaves is a prefix of N's. */
export interface ConsistencyProof {
  /** The older tree size (the client's kept head). */
  readonly first: number
  /** The newer tree size. */
  readonly second: number
  /** RFC 9162 section 2.1.4.1 consistency path, hex. */
  readonly consistency_path: ReadonlyArray<string>
  /** The signed head of the tree of `second` leaves. */
  readonly sth: SignedTreeHead
}

export const CONSISTENCY_CHECK_LABELS = ["old tree head", "new tree head", "proof schema", "consistency"] as const

export type ConsistencyCheckLabel = (typeof CONSISTENCY_CHECK_LABELS)[number]

export interface ConsistencyCheck {
  readonly label: ConsistencyCheckLabel
  readonly status: "ok" | "fail" | "skipped"
  readonly detail: string
}

export interface ConsistencyVerification {
  readonly valid: boolean
  readonly reason: string | null
  readonly checks: ReadonlyArray<ConsistencyCheck>
}

/** Why `value` is not a consistency proof, or null. */
export const consistencyProofShapeProblem = (value: unknown): string | null => {
  if (!isRecord(value)) return "the proof is not a JSON object"
  if (!isCount(value.first)) return "first must be a non-negative integer"
  if (!isCount(value.second)) return "second must be a non-negative integer"
  if (!Array.isArray(value.consistency_path) || !value.consistency_path.every(isSha256Hex)) {
    return "consistency_path must be an array of 64 lowercase hex"
  }
  return null
}

/** SHA-256 of no bytes, hex: the root of the empty tree. */
const EMPTY_ROOT_HEX = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/**
 * Verifies offline that `proof` shows the log whose head the client kept (`oldHead`) is a prefix of the log whose
 * head is `newHead` (default: the head inside the proof); see the file comment for the checks. Never throws, except
 * when `resolveKey` throws.
 */
export const verifyConsistencyProof = async (
  proof: unknown,
  oldHead: unknown,
  options: { readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined>; readonly newHead?: unknown }
): Promise<ConsistencyVerification> => {
  const checks: Array<ConsistencyCheck> = []
  const finish = (): ConsistencyVerification => {
    const failure = checks.find((c) => c.status === "fail")
    for (const label of CONSISTENCY_CHECK_LABELS.slice(checks.length)) {
      checks.push({ label, status: "skipped", detail: "not evaluated: an earlier check failed" })
    }
    return { valid: failure === undefined, reason: failure ? `${failure.label}: ${failure.detail}` : null, checks }
  }
  const record = (label: ConsistencyCheckLabel, outcome: Outcome): boolean => {
    checks.push({ label, status: outcome.ok ? "ok" : "fail", detail: outcome.detail })
    return outcome.ok
  }

  if (!record("old tree head", await checkTreeHead(oldHead, options.resolveKey))) return finish()
  const older = oldHead as SignedTreeHead
  const newHead = options.newHead !== undefined ? options.newHead : isRecord(proof) ? proof.sth : undefined
  const newOutcome = await checkTreeHead(newHead, options.resolveKey)
  const newer = newHead as SignedTreeHead
  if (!record("new tree head", newOutcome.ok && newer.iss !== older.iss
    ? { ok: false, detail: `the new tree head is of the log ${JSON.stringify(newer.iss)}, the old one of ${JSON.stringify(older.iss)}` }
    : newOutcome)) {
    return finish()
  }
  const schema = (): Outcome => {
    if (newer.tree_size < older.tree_size) {
      return { ok: false, detail: `the new tree head has ${newer.tree_size} leaves, fewer than the ${older.tree_size} of the old one: the log rolled back` }
    }
    if (older.tree_size === 0) {
      return older.root_hash === EMPTY_ROOT_HEX
        ? { ok: true, detail: "the old tree is empty: every tree extends it" }
        : { ok: false, detail: "the old tree head has 0 leaves but not the empty tree's root_hash" }
    }
    const problem = consistencyProofShapeProblem(proof)
    if (problem !== null) return { ok: false, detail: problem }
    const p = proof as ConsistencyProof
    if (p.first !== older.tree_size || p.second !== newer.tree_size) {
      return { ok: false, detail: `the proof is from tree size ${p.first} to ${p.second}, the tree heads are of ${older.tree_size} and ${newer.tree_size}` }
    }
    return { ok: true, detail: `from tree size ${p.first} to ${p.second}, ${p.consistency_path.length} hashes` }
  }
  if (!record("proof schema", schema())) return finish()
  if (older.tree_size === 0) {
    record("consistency", { ok: true, detail: `not needed: the log of ${newer.tree_size} leaves extends the empty log` })
    return finish()
  }
  const p = proof as ConsistencyProof
  const consistent = await verifyConsistency({
    first: p.first,
    second: p.second,
    firstRoot: hexToBytes(older.root_hash),
    secondRoot: hexToBytes(newer.root_hash),
    proof: p.consistency_path.map(hexToBytes)
  })
  record("consistency", consistent
    ? { ok: true, detail: `the log of ${p.second} leaves extends the log of ${p.first} leaves: root ${older.root_hash} to ${newer.root_hash}` }
    : p.first === p.second && older.root_hash !== newer.root_hash
    ? { ok: false, detail: `two different root hashes for tree size ${p.first}: the log forked` }
    : { ok: false, detail: `the consistency path does not lead from root ${older.root_hash} to ${newer.root_hash}: the log forked or the proof is wrong` })
  return finish()
}
