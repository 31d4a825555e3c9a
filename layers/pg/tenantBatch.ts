import type { StoredResponse } from "../../services/Idempotency.ts"
import type { FailedSealInput, MeteredCall, SealedReceipts, SealInput } from "../../services/ReceiptSealer.ts"
import type { FailedReceiptV2 } from "../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import type { Signer } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import { failedChainId, v1ChainId, v2ChainId } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { storedRow } from "./idempotencyRecords.ts"
import { type ChainHead, emptyBatch, sealCompleted, sealFailed, type SettleBatch } from "./settleBatch.ts"

/** One unit of work for a tenant's sealing actor: a settlement, a receipt, a failed-call receipt, a hold or a release. */
export interface Job {
  readonly seal?: SealInput
  readonly metered?: MeteredCall
  readonly failed?: FailedSealInput
  readonly holdRequest?: { readonly id: string; readonly amountMicros: bigint; readonly expiresAt: Date }
  readonly release?: string
}
export interface JobResult {
  readonly sealed?: SealedReceipts
  readonly failed?: FailedReceiptV2
  readonly granted?: boolean
  readonly response?: StoredResponse
}

/** The chains a job writes to. */
export const chainsOf = (orgId: string, job: Job): Array<string> => [
  ...(job.seal === undefined ? [] : [v2ChainId(orgId), v1ChainId(job.seal.accountId)]),
  ...(job.failed === undefined ? [] : [failedChainId(orgId)])
]

/** The batch's row lists, restored when a job fails half-way. */
const ROW_ARRAYS = [
  "receiptsV2",
  "receiptsV1",
  "receiptsFailed",
  "transparency",
  "usage",
  "ledger",
  "outbox",
  "holds",
  "holdRequests",
  "idempotency"
] as const satisfies ReadonlyArray<keyof SettleBatch>

/**
 * One tenant's batch as it is being signed: jobs are added in order, each signed on from the head the previous one
 * left (`heads`), starting from the heads the batch expects to find in the database (`expected`, taken from `headOf`
 * the first time a chain is touched). Jobs can be added until the batch is written, so a batch signed ahead (while
 * the previous statement commits) still takes in what queued up meanwhile.
 */
export class TenantBatch {
  readonly batch: SettleBatch
  readonly results: Array<JobResult> = []
  /** Each chain's head after the jobs added so far. */
  readonly heads = new Map<string, ChainHead>()
  readonly orgId: string
  private readonly expected = new Map<string, { readonly kind: "v2" | "v1" | "failed"; readonly head: ChainHead }>()
  private readonly at: { readonly iss: string; readonly signer: Signer; readonly nowMs: () => number }
  private readonly headOf: (chainId: string) => ChainHead
  /** Something was signed with `at.signer` (a receipt, or an answer rendered with it): the write checks that key. */
  private signed = false

  constructor(
    orgId: string,
    at: { readonly iss: string; readonly signer: Signer; readonly nowMs: () => number },
    headOf: (chainId: string) => ChainHead
  ) {
    this.orgId = orgId
    this.at = at
    this.headOf = headOf
    this.batch = emptyBatch(orgId)
  }

  private take(chainId: string, kind: "v2" | "v1" | "failed"): ChainHead {
    if (!this.expected.has(chainId)) {
      const head = this.headOf(chainId)
      this.expected.set(chainId, { kind, head })
      this.heads.set(chainId, head)
    }
    return this.heads.get(chainId)!
  }

  /**
   * Signs `job` on from the current heads and adds its rows; its result is `results[results.length - 1]`. All or
   * nothing: a job that fails half-way (its response cannot be rendered, say) leaves the batch as it was, so the
   * jobs already in it are written as signed and nothing of the failed one is.
   */
  async add(job: Job): Promise<void> {
    const { batch } = this
    const lengths = ROW_ARRAYS.map((k) => batch[k].length)
    const debit = batch.debit
    const lowBalanceDefault = batch.lowBalanceDefault
    const heads = new Map(this.heads)
    const expected = new Map(this.expected)
    const signed = this.signed
    try {
      await this.addUnsafe(job)
    } catch (e) {
      ROW_ARRAYS.forEach((k, i) => (batch[k] as Array<unknown>).splice(lengths[i]!))
      batch.debit = debit
      batch.lowBalanceDefault = lowBalanceDefault
      this.heads.clear()
      heads.forEach((h, id) => this.heads.set(id, h))
      this.expected.clear()
      expected.forEach((h, id) => this.expected.set(id, h))
      this.signed = signed
      throw e
    }
  }

  private async addUnsafe(job: Job): Promise<void> {
    const { orgId, batch } = this
    const { iss, signer } = this.at
    let sealed: SealedReceipts | undefined
    let failed: FailedReceiptV2 | undefined
    let response: StoredResponse | undefined
    if (job.seal !== undefined || job.failed !== undefined) this.signed = true
    if (job.seal !== undefined) {
      const v2Chain = v2ChainId(orgId)
      const v1Chain = v1ChainId(job.seal.accountId)
      const out = await sealCompleted(batch, {
        iss,
        signer,
        input: job.seal,
        v2: { chainId: v2Chain, head: this.take(v2Chain, "v2") },
        v1: { chainId: v1Chain, head: this.take(v1Chain, "v1") }
      })
      this.heads.set(v2Chain, out.v2Head)
      this.heads.set(v1Chain, out.v1Head)
      sealed = out.sealed
    }
    if (job.failed !== undefined) {
      const chainId = failedChainId(orgId)
      const out = await sealFailed(batch, { iss, signer, input: job.failed, chainId, head: this.take(chainId, "failed") })
      this.heads.set(chainId, out.head)
      failed = out.receipt
    }
    if (job.metered !== undefined) {
      const m = job.metered
      batch.usage.push({ ...m.usage, receipt_jti: sealed?.jti ?? null })
      batch.ledger.push({
        org_id: orgId,
        kind: "debit",
        amount_micros: (-m.billedMicros).toString(),
        reference: m.ledgerReference,
        usage_id: m.usage.id
      })
      batch.holds.push(m.holdId)
      batch.debit += m.billedMicros
      batch.lowBalanceDefault = m.lowBalanceDefaultMicros
      const render = m.response?.render ?? m.render
      if (render !== undefined) {
        // Rendered from the receipts just signed, with the key that signed them (the answer's v3 countersignature):
        // what is stored is exactly what the client is answered, and the write checks that key is still current.
        this.signed = true
        response = await render(sealed === undefined ? undefined : { jti: sealed.jti, v2: sealed.v2 }, signer)
        if (m.response !== undefined) batch.idempotency.push(storedRow(m.response, response, this.at.nowMs()))
      }
    }
    if (job.holdRequest !== undefined) {
      const h = job.holdRequest
      batch.holdRequests.push({ id: h.id, amount_micros: h.amountMicros.toString(), expires_at: h.expiresAt.toISOString() })
    }
    if (job.release !== undefined) batch.holds.push(job.release)
    this.results.push({ sealed, failed, response })
  }

  /**
   * The document `relay_settle` reads (bigints as decimal strings), heads checked and moved included, and the kid of
   * the key it was signed with when it signed anything (relay_settle_many refuses it once that key is retired).
   * `new_chains`: some head it expects is at genesis, so the function creates head rows before locking them
   * (migrations/0024_settle_fewer_statements.ts); false on every call but a chain's first.
   */
  document() {
    const { batch } = this
    return {
      ...(this.signed ? { kid: this.at.signer.kid } : {}),
      org_id: batch.orgId,
      new_chains: [...this.expected.values()].some(({ head }) => head.seq === 0),
      low_balance_default_micros: batch.lowBalanceDefault.toString(),
      debit_micros: batch.debit.toString(),
      heads: [...this.expected].map(([chainId, { kind, head }]) => {
        const next = this.heads.get(chainId)!
        return {
          chain_id: chainId,
          org_id: this.orgId,
          kind,
          expect_seq: String(head.seq),
          expect_hash: head.hash,
          new_seq: String(next.seq),
          new_hash: next.hash
        }
      }),
      receipts_v2: batch.receiptsV2,
      receipts_v1: batch.receiptsV1,
      receipts_failed: batch.receiptsFailed,
      transparency: batch.transparency,
      usage: batch.usage,
      ledger: batch.ledger,
      outbox: batch.outbox,
      holds: batch.holds,
      hold_requests: batch.holdRequests
    }
  }
}
