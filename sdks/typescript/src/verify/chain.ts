// Verification of an exported chain of receipts (v1 `tenant-...`, v2 `receipt-v2-org-...` or failed
// `failed-v2-org-...`), in order: every receipt with verifyReceipt, each linked to the one before it, so a gap, a
// reordering, a receipt of another chain, a changed receipt or a substituted one is found, with its position and its
// kind. verifyChainExport takes what `receipt_chain_export` (the MCP tool) writes, or JSON Lines, whole.
import type { VerificationResult } from "../wire/receipts/verify.ts"
import { decodeEnvelopeInput, type EnvelopeInput } from "./envelopeInput.ts"
import { keyResolverOf, type JwksOption } from "./jwks.ts"
import { verifyReceipt } from "./receipt.ts"

/**
 * What broke, named:
 * - `gap`          seq jumps forward and the missing receipts are not in the list (receipts were left out or removed)
 * - `reorder`      seq goes back, or jumps forward to a receipt whose predecessors come later in the list
 * - `duplicate`    the same seq again (the same receipt twice, or two receipts for one seq: a fork)
 * - `substituted`  seq follows but prev_hash is not the hash of the receipt before: one of the two is not the receipt
 *                  the chain holds (swapped for another receipt signed for that position)
 * - `other_chain`  a receipt of another chain
 * - `tampered`     the signature does not verify (the receipt was changed, or signed by an unpublished key)
 * - `invalid`      the receipt fails another check (schema, algorithm, time, chain rules such as genesis)
 * - `unchained`    a valid envelope that belongs to no chain (a v3 attestation or countersignature)
 */
export type ChainBreakKind = "gap" | "reorder" | "duplicate" | "substituted" | "other_chain" | "tampered" | "invalid" | "unchained"

export const CHAIN_BREAK_KINDS: ReadonlyArray<ChainBreakKind> = [
  "gap", "reorder", "duplicate", "substituted", "other_chain", "tampered", "invalid", "unchained"
]

export interface ChainBreak {
  /** Position in the list given (0 = first). */
  readonly index: number
  /** The receipt's chain.seq, when it has one. */
  readonly seq: number | null
  readonly jti: string | null
  readonly kind: ChainBreakKind
  /** verifyReceipt's reason for that receipt, e.g. "chain linkage (seq and prev_hash): seq 4 does not follow previous seq 2". */
  readonly reason: string
  /** The full result for that receipt. */
  readonly result: VerificationResult
}

/** Receipts missing between two in the list (only with `allowGaps`): seq after_seq + 1 to seq - 1. */
export interface ChainGap {
  /** Position of the receipt after the gap. */
  readonly index: number
  readonly afterSeq: number
  readonly seq: number
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
  /** Gaps passed over (`allowGaps`); empty otherwise (a gap is then a break). */
  readonly gaps: ReadonlyArray<ChainGap>
}

export interface VerifyChainOptions {
  readonly jwks: JwksOption
  readonly nowSeconds?: number
  /**
   * Accept gaps: for the receipts ONE client holds of a chain other clients of the organisation also write to. Each
   * receipt after a gap is verified on its own (its link to the receipt before it cannot be checked) and the gap is
   * listed. Default false: a gap is a break.
   */
  readonly allowGaps?: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const chainOf = (envelope: unknown): { chain_id: unknown; seq: unknown } | undefined =>
  isRecord(envelope) && isRecord(envelope.chain) ? (envelope.chain as { chain_id: unknown; seq: unknown }) : undefined

const seqOf = (envelope: unknown): number | null => {
  const seq = chainOf(envelope)?.seq
  return typeof seq === "number" ? seq : null
}

/** The kind of a failed link at `index`, from the receipts' seq and chain ids (see ChainBreakKind). */
const linkKind = (envelopes: ReadonlyArray<unknown>, index: number): ChainBreakKind => {
  const before = chainOf(envelopes[index - 1])
  const here = chainOf(envelopes[index])
  if (index === 0 || before === undefined || here === undefined) return "invalid"
  if (before.chain_id !== here.chain_id) return "other_chain"
  if (typeof before.seq !== "number" || typeof here.seq !== "number") return "invalid"
  if (here.seq === before.seq) return "duplicate"
  if (here.seq < before.seq) return "reorder"
  if (here.seq > before.seq + 1) {
    const from = before.seq
    const to = here.seq
    const missingComesLater = envelopes.slice(index + 1).some((e) => {
      const seq = seqOf(e)
      return seq !== null && seq > from && seq < to && chainOf(e)!.chain_id === here.chain_id
    })
    return missingComesLater ? "reorder" : "gap"
  }
  return "substituted"
}

/** The link checks against the previous receipt (verifyReceipt's chain linkage details); other chain rules are "invalid". */
const LINK_FAILURE = /^seq \d+ does not follow previous seq |^previous receipt belongs to another chain$|^prev_hash is not the hash of the previous receipt$/

const kindOf = (result: VerificationResult, envelopes: ReadonlyArray<unknown>, index: number): ChainBreakKind => {
  const failed = result.checks.find((c) => c.status === "fail")
  if (failed?.label === "signature") return "tampered"
  if (failed?.label === "chain linkage (seq and prev_hash)" && index > 0 && LINK_FAILURE.test(failed.detail)) return linkKind(envelopes, index)
  return "invalid"
}

/**
 * Verifies receipts of ONE chain given in chain order. Stops at the first break and reports it, named. Throws
 * TypeError when `receipts` is not an array, and JwksError when the keys cannot be obtained.
 */
export const verifyChain = async (receipts: ReadonlyArray<EnvelopeInput>, options: VerifyChainOptions): Promise<ChainVerification> => {
  if (!Array.isArray(receipts)) throw new TypeError("verifyChain: receipts must be an array of receipts in chain order")
  const jwks = { resolveKey: keyResolverOf(options.jwks) }
  const envelopes = receipts.map((r) => {
    const decoded = decodeEnvelopeInput(r)
    return decoded.ok ? decoded.envelope : r
  })
  const first = envelopes[0]
  const firstChainId = chainOf(first)?.chain_id
  const chainId = typeof firstChainId === "string" ? firstChainId : null
  const summary = { chainId, firstSeq: seqOf(first), lastSeq: seqOf(envelopes[envelopes.length - 1]) }
  const gaps: Array<ChainGap> = []
  const verify = (index: number, linked: boolean) =>
    verifyReceipt(receipts[index]!, {
      jwks,
      nowSeconds: options.nowSeconds,
      previous: index === 0 || !linked ? undefined : (envelopes[index - 1] as EnvelopeInput)
    })
  for (let index = 0; index < envelopes.length; index++) {
    const envelope = envelopes[index]
    let result = await verify(index, true)
    let kind = result.valid ? undefined : kindOf(result, envelopes, index)
    if (kind === "gap" && options.allowGaps === true) {
      gaps.push({ index, afterSeq: seqOf(envelopes[index - 1])!, seq: seqOf(envelope)! })
      result = await verify(index, false)
      kind = result.valid ? undefined : kindOf(result, envelopes, index)
    }
    // v3 attestations and countersignatures verify on their own but belong to no chain.
    if (kind === undefined && chainOf(envelope) === undefined) kind = "unchained"
    if (kind !== undefined) {
      const reason = kind === "unchained" ? `a ${String((envelope as Record<string, unknown>).v)} envelope is not part of a receipt chain` : result.reason!
      const jti = isRecord(envelope) && typeof envelope.jti === "string" ? envelope.jti : null
      return { valid: false, ...summary, verified: index, break: { index, seq: seqOf(envelope), jti, kind, reason, result }, gaps }
    }
  }
  return { valid: true, ...summary, verified: envelopes.length, break: null, gaps }
}

export interface ChainExportVerification {
  /** Every chain verified (an empty export is trivially intact, as an empty chain is). */
  readonly valid: boolean
  /** One entry per chain, in the order the export names them. */
  readonly chains: ReadonlyArray<ChainVerification & { readonly count: number }>
}

/**
 * The receipts of an export, grouped by chain in their order: `receipt_chain_export`'s output (the object, or its
 * JSON text: `{ chains: [{ chain_id, receipts }] }`), its `jsonl` text (one receipt per line), or an array of
 * receipts. Throws TypeError for anything else.
 */
export const chainsOfExport = (exported: unknown): Array<{ readonly chainId: string | null; readonly receipts: Array<EnvelopeInput> }> => {
  let value = exported
  if (typeof value === "string") {
    const text = value.trim()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    // The export as JSON text, an array of receipts as JSON text, or else JSON Lines (a receipt per line: JSON text or
    // a header value).
    value = (isRecord(parsed) && Array.isArray(parsed.chains)) || Array.isArray(parsed)
      ? parsed
      : text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  }
  if (isRecord(value) && Array.isArray(value.chains)) {
    return value.chains.map((c: unknown) => {
      if (!isRecord(c) || !Array.isArray(c.receipts)) throw new TypeError("verifyChainExport: every entry of chains needs a receipts array")
      return { chainId: typeof c.chain_id === "string" ? c.chain_id : null, receipts: c.receipts as Array<EnvelopeInput> }
    })
  }
  if (!Array.isArray(value)) {
    throw new TypeError("verifyChainExport: give receipt_chain_export's output (object or JSON), its jsonl text, or an array of receipts")
  }
  const groups = new Map<string | null, Array<EnvelopeInput>>()
  for (const receipt of value as Array<EnvelopeInput>) {
    const decoded = decodeEnvelopeInput(receipt)
    const id = decoded.ok ? chainOf(decoded.envelope)?.chain_id : undefined
    const key = typeof id === "string" ? id : null
    groups.set(key, [...(groups.get(key) ?? []), receipt])
  }
  return [...groups].map(([chainId, receipts]) => ({ chainId, receipts }))
}

/**
 * Verifies an exported set of chains offline (see chainsOfExport for the forms): each chain with verifyChain, in the
 * export's order (an export lists a chain in seq order; a reordering is a break). Throws TypeError for what is not
 * an export, JwksError when the keys cannot be obtained.
 */
export const verifyChainExport = async (exported: unknown, options: VerifyChainOptions): Promise<ChainExportVerification> => {
  const chains = []
  for (const { receipts } of chainsOfExport(exported)) {
    chains.push({ ...(await verifyChain(receipts, options)), count: receipts.length })
  }
  return { valid: chains.every((c) => c.valid), chains }
}
