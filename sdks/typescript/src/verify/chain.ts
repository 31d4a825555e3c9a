// Verification of an exported chain of receipts (v1 `tenant-...`, v2 `receipt-v2-org-...` or failed
// `failed-v2-org-...`), in order: every receipt with verifyReceipt, each linked to the one before it, so a gap, a
// reordering, a receipt of another chain, a changed receipt or a re-signed one is found, with its position.
import type { VerificationResult } from "../wire/receipts/verify.ts"
import { decodeEnvelopeInput, type EnvelopeInput } from "./envelopeInput.ts"
import { keyResolverOf, type JwksOption } from "./jwks.ts"
import { verifyReceipt } from "./receipt.ts"

export interface ChainBreak {
  /** Position in the list given (0 = first). */
  readonly index: number
  /** The receipt's chain.seq, when it has one. */
  readonly seq: number | null
  readonly jti: string | null
  /** verifyReceipt's reason for that receipt, e.g. "chain linkage (seq and prev_hash): seq 4 does not follow previous seq 2". */
  readonly reason: string
  /** The full result for that receipt. */
  readonly result: VerificationResult
}

export interface ChainVerification {
  readonly valid: boolean
  /** The chain_id of the first receipt; null for an empty list. */
  readonly chainId: string | null
  /** seq of the first and last receipt (an export may start after seq 1: then the first link is not checked). */
  readonly firstSeq: number | null
  readonly lastSeq: number | null
  /** Receipts that verified before the first break (all of them when valid). */
  readonly verified: number
  /** The first break, or null. */
  readonly break: ChainBreak | null
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const seqOf = (envelope: unknown): number | null =>
  isRecord(envelope) && isRecord(envelope.chain) && typeof envelope.chain.seq === "number" ? envelope.chain.seq : null

/**
 * Verifies receipts of ONE chain given in chain order. Stops at the first break and reports it. Throws TypeError
 * when `receipts` is not an array, and JwksError when the keys cannot be obtained.
 */
export const verifyChain = async (
  receipts: ReadonlyArray<EnvelopeInput>,
  options: { readonly jwks: JwksOption; readonly nowSeconds?: number }
): Promise<ChainVerification> => {
  if (!Array.isArray(receipts)) throw new TypeError("verifyChain: receipts must be an array of receipts in chain order")
  const jwks = { resolveKey: keyResolverOf(options.jwks) }
  const envelopes = receipts.map((r) => {
    const decoded = decodeEnvelopeInput(r)
    return decoded.ok ? decoded.envelope : r
  })
  const first = envelopes[0]
  const chainId = isRecord(first) && isRecord(first.chain) && typeof first.chain.chain_id === "string" ? first.chain.chain_id : null
  const summary = { chainId, firstSeq: seqOf(first), lastSeq: seqOf(envelopes[envelopes.length - 1]) }
  for (let index = 0; index < envelopes.length; index++) {
    const envelope = envelopes[index]
    const result = await verifyReceipt(receipts[index]!, {
      jwks,
      nowSeconds: options.nowSeconds,
      previous: index === 0 ? undefined : (envelopes[index - 1] as EnvelopeInput)
    })
    // v3 attestations and countersignatures verify on their own but belong to no chain.
    const unchained = result.valid && !(isRecord(envelope) && isRecord(envelope.chain))
    if (!result.valid || unchained) {
      const reason = unchained ? `a ${String((envelope as Record<string, unknown>).v)} envelope is not part of a receipt chain` : result.reason!
      const jti = isRecord(envelope) && typeof envelope.jti === "string" ? envelope.jti : null
      return { valid: false, ...summary, verified: index, break: { index, seq: seqOf(envelope), jti, reason, result } }
    }
  }
  return { valid: true, ...summary, verified: envelopes.length, break: null }
}
