import { Clock, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import type { StoredResponse } from "../../services/Idempotency.ts"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import {
  type FailedSealInput,
  type MeteredCall,
  ReceiptSealer,
  type SealedReceipts,
  type SealInput
} from "../../services/ReceiptSealer.ts"
import type { FailedReceiptV2 } from "../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import type { Signer } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import { failedChainId, GENESIS_PREV_HASH, v1ChainId, v2ChainId } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { makeKeyedBatcher } from "../KeyedBatcher.ts"
import { jsonColumn } from "./jsonColumn.ts"
import { STORED_COLUMNS, STORED_RECORDSET, STORED_UPSERT, storedRow } from "./idempotencyRecords.ts"
import { SealerQueue } from "../../services/SealerQueue.ts"
import { type ChainHead, emptyBatch, sealCompleted, sealFailed, type SettleBatch } from "./settleBatch.ts"

/** Most jobs written in one statement; more wait for the next batch. */
const MAX_BATCH = 128
/** Re-sign and retry this often when another process keeps moving a chain head first, then give up loudly. */
const MAX_ATTEMPTS = 50
/** Cached chain heads kept at most; past it the cache starts over (heads are re-read on demand). */
const MAX_CACHED_HEADS = 100_000

interface Job {
  readonly seal?: SealInput
  readonly metered?: MeteredCall
  readonly failed?: FailedSealInput
  readonly holdRequest?: { readonly id: string; readonly amountMicros: bigint; readonly expiresAt: Date }
  readonly release?: string
}
interface JobResult {
  readonly sealed?: SealedReceipts
  readonly failed?: FailedReceiptV2
  readonly granted?: boolean
  readonly response?: StoredResponse
}

/** The chains a job writes to, with their kind. */
const chainsOf = (orgId: string, job: Job): Array<readonly [string, "v2" | "v1" | "failed"]> => [
  ...(job.seal === undefined ? [] : [[v2ChainId(orgId), "v2"] as const, [v1ChainId(job.seal.accountId), "v1"] as const]),
  ...(job.failed === undefined ? [] : [[failedChainId(orgId), "failed"] as const])
]

/**
 * The per-tenant sealing actor (DESIGN.md section 5). Each organisation has at most one writer fiber in a process;
 * jobs (a completed call's receipts and money, a failed-call receipt, a wallet hold or its release) queue on it,
 * and it writes whatever has queued up as ONE call of `relay_settle` (migrations/0010_settle_batch.ts): one round
 * trip and one commit for the whole batch, atomic on its own. Under load a batch holds many calls, so the per-tenant row locks (chain heads,
 * wallet) are taken once per batch instead of once per call.
 *
 * Sequence numbers: the actor keeps each chain's head (last seq and hash) in memory, signs the batch's receipts on
 * from it, and the function refuses the batch (writing nothing) unless every head is still exactly that; another
 * gateway process on the same database that moved a head first makes this one re-read, re-sign and retry. The
 * UNIQUE (chain_id, seq) constraint is the backstop. So any number of processes never fork a chain.
 *
 * A batch that fails for any other reason is retried job by job, so one bad job fails alone. The queueing is
 * layers/KeyedBatcher.ts, keyed by organisation.
 */
export const ReceiptSealerPg = Layer.effect(
  ReceiptSealer,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ReceiptKeys
    const iss = (yield* AppConfig).publicBaseUrl
    const heads = new Map<string, ChainHead>()

    const loadHeads = (chainIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        if (heads.size > MAX_CACHED_HEADS) heads.clear()
        const missing = chainIds.filter((id) => !heads.has(id))
        if (missing.length === 0) return
        const rows = yield* sql<{ chain_id: string; last_seq: string; last_hash: string }>`
          SELECT chain_id, last_seq::text AS last_seq, last_hash FROM receipt_chains WHERE chain_id IN ${sql.in(missing)}`
        for (const id of missing) {
          const row = rows.find((r) => r.chain_id === id)
          heads.set(id, row === undefined ? { seq: 0, hash: GENESIS_PREV_HASH } : { seq: Number(row.last_seq), hash: row.last_hash })
        }
      })

    /** Signs the jobs on from the cached heads: the batch document and each job's receipts. */
    const build = async (orgId: string, jobs: ReadonlyArray<Job>, signer: Signer, nowMs: number) => {
      const batch: SettleBatch = emptyBatch(orgId)
      const local = new Map<string, ChainHead>()
      const expected = new Map<string, { kind: "v2" | "v1" | "failed"; head: ChainHead }>()
      const take = (chainId: string, kind: "v2" | "v1" | "failed") => {
        if (!expected.has(chainId)) {
          const head = heads.get(chainId)!
          expected.set(chainId, { kind, head })
          local.set(chainId, head)
        }
        return local.get(chainId)!
      }
      const results: Array<JobResult> = []
      for (const job of jobs) {
        let sealed: SealedReceipts | undefined
        let failed: FailedReceiptV2 | undefined
        let response: StoredResponse | undefined
        if (job.seal !== undefined) {
          const v2Chain = v2ChainId(orgId)
          const v1Chain = v1ChainId(job.seal.accountId)
          const out = await sealCompleted(batch, {
            iss,
            signer,
            input: job.seal,
            v2: { chainId: v2Chain, head: take(v2Chain, "v2") },
            v1: { chainId: v1Chain, head: take(v1Chain, "v1") }
          })
          local.set(v2Chain, out.v2Head)
          local.set(v1Chain, out.v1Head)
          sealed = out.sealed
        }
        if (job.failed !== undefined) {
          const chainId = failedChainId(orgId)
          const out = await sealFailed(batch, { iss, signer, input: job.failed, chainId, head: take(chainId, "failed") })
          local.set(chainId, out.head)
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
          if (m.response !== undefined) {
            // Rendered from the receipts just signed: what is stored is exactly what the client is answered.
            response = await m.response.render(sealed === undefined ? undefined : { jti: sealed.jti, v2: sealed.v2 })
            batch.idempotency.push(storedRow(m.response, response, nowMs))
          }
        }
        if (job.holdRequest !== undefined) {
          const h = job.holdRequest
          batch.holdRequests.push({ id: h.id, amount_micros: h.amountMicros.toString(), expires_at: h.expiresAt.toISOString() })
        }
        if (job.release !== undefined) batch.holds.push(job.release)
        results.push({ sealed, failed, response })
      }
      for (const [chainId, { kind, head }] of expected) {
        const next = local.get(chainId)!
        batch.heads.push({
          chain_id: chainId,
          org_id: orgId,
          kind,
          expect_seq: String(head.seq),
          expect_hash: head.hash,
          new_seq: String(next.seq),
          new_hash: next.hash
        })
      }
      return { batch, results, newHeads: local }
    }

    /** Writes the jobs as one batch, re-signing on a moved head; fails on any other error. */
    const commit = (orgId: string, jobs: ReadonlyArray<Job>) =>
      Effect.gen(function*() {
        const chainIds = [...new Set(jobs.flatMap((job) => chainsOf(orgId, job).map(([id]) => id)))]
        const { signer } = yield* keys.current
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          yield* loadHeads(chainIds)
          const nowMs = yield* Clock.currentTimeMillis
          const built = yield* Effect.promise(() => build(orgId, jobs, signer, nowMs))
          const document = JSON.stringify(toJson(built.batch))
          const rows = yield* (built.batch.idempotency.length === 0
            ? sql<{ r: unknown }>`SELECT relay_settle(${document}::jsonb) AS r`
            : // The idempotent responses in the same statement, written only when relay_settle wrote the batch (a
              // refused batch writes nothing, and neither does this).
              sql<{ r: unknown }>`
                WITH settled AS (SELECT relay_settle(${document}::jsonb) AS r),
                stored AS (
                  INSERT INTO idempotency_records (${sql.literal(STORED_COLUMNS)})
                  SELECT ${sql.literal(STORED_COLUMNS)}
                  FROM jsonb_to_recordset(${JSON.stringify(built.batch.idempotency)}::jsonb) AS ${sql.literal(STORED_RECORDSET)}, settled
                  WHERE (settled.r->>'ok')::boolean
                  ${sql.literal(STORED_UPSERT)}
                )
                SELECT r FROM settled`)
          const answer = jsonColumn<{
            ok: boolean
            heads?: ReadonlyArray<{ chain_id: string; last_seq: number | string; last_hash: string }>
            granted?: ReadonlyArray<string>
          }>(rows[0].r)
          if (answer.ok) {
            for (const [chainId, head] of built.newHeads) heads.set(chainId, head)
            const granted = new Set(answer.granted ?? [])
            return built.results.map((result, i) => {
              const request = jobs[i].holdRequest
              return request === undefined ? result : { ...result, granted: granted.has(request.id) }
            })
          }
          for (const h of answer.heads ?? []) heads.set(h.chain_id, { seq: Number(h.last_seq), hash: h.last_hash })
        }
        return yield* Effect.die(new Error(`chain heads of ${orgId} kept moving: gave up after ${MAX_ATTEMPTS} attempts`))
      }).pipe(
        // After any failure the cached heads of these chains may be wrong: read them again next time.
        Effect.tapCause(() => Effect.sync(() => jobs.forEach((job) => chainsOf(orgId, job).forEach(([id]) => heads.delete(id))))),
        Effect.withSpan("ReceiptSealer.batch", { attributes: { org_id: orgId, jobs: jobs.length } })
      )

    /** One batch; when it fails, each job alone, so a bad job fails by itself. Answers every job. */
    const { submit, busy, stats } = yield* makeKeyedBatcher<Job, JobResult>({
      maxBatch: MAX_BATCH,
      run: (orgId, jobs) =>
        Effect.gen(function*() {
          const exit = yield* Effect.exit(Effect.orDie(commit(orgId, jobs)))
          if (Exit.isSuccess(exit)) return exit.value.map((r) => Exit.succeed(r))
          if (jobs.length === 1) return [exit as Exit.Exit<never>]
          const one: Array<Exit.Exit<JobResult>> = []
          for (const job of jobs) one.push(Exit.map(yield* Effect.exit(Effect.orDie(commit(orgId, [job]))), (r) => r[0]))
          return one
        })
    })

    // The queue gauge of /metrics (services/SealerQueue.ts), when the layer above provides it.
    const queue = yield* Effect.serviceOption(SealerQueue)
    if (queue._tag === "Some") queue.value.attach(() => ({ pendingJobs: stats().pending, activeTenants: stats().activeKeys }))

    /** One hold as one statement; like a batch of holds it does not wait for the WAL flush (docs/decisions.md). */
    const holdNow = (orgId: string, id: string, amountMicros: bigint, expiresAt: Date) =>
      sql<{ id: string }>`
        WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
        reserved AS (
          UPDATE wallets SET held_micros = held_micros + ${amountMicros.toString()}::bigint
          WHERE org_id = ${orgId} AND balance_micros - held_micros > 0
          RETURNING org_id
        )
        INSERT INTO wallet_holds (id, org_id, amount_micros, expires_at)
        SELECT ${id}, org_id, ${amountMicros.toString()}::bigint, ${expiresAt} FROM reserved, relaxed
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /** One release as one statement (a hold already released or swept is a no-op). */
    const releaseNow = (holdId: string) =>
      sql`
        WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
        released AS (DELETE FROM wallet_holds WHERE id = ${holdId} RETURNING org_id, amount_micros)
        UPDATE wallets w SET held_micros = w.held_micros - released.amount_micros
        FROM released, relaxed WHERE w.org_id = released.org_id`.pipe(Effect.asVoid, Effect.orDie)

    return ReceiptSealer.of({
      seal: (input) => Effect.map(submit(input.orgId, { seal: input }), (r) => r.sealed!),
      settle: ({ orgId, seal, metered }) => Effect.map(submit(orgId, { seal, metered }), (r) => ({ sealed: r.sealed, response: r.response })),
      sealFailed: (input) => Effect.map(submit(input.orgId, { failed: input }), (r) => r.failed!),
      // A lone hold or release (the tenant's actor is idle) is one plain statement, cheaper than a batch of one;
      // while the actor is busy it queues and shares the next batch. Both are atomic on the wallet row.
      hold: ({ orgId, id, amountMicros, expiresAt }) =>
        busy(orgId)
          ? Effect.map(submit(orgId, { holdRequest: { id, amountMicros, expiresAt } }), (r) => r.granted === true)
          : holdNow(orgId, id, amountMicros, expiresAt),
      release: ({ orgId, holdId }) => busy(orgId) ? Effect.asVoid(submit(orgId, { release: holdId })) : releaseNow(holdId)
    })
  })
)

/** The batch document as relay_settle reads it (bigints as decimal strings). */
const toJson = (batch: SettleBatch) => ({
  org_id: batch.orgId,
  low_balance_default_micros: batch.lowBalanceDefault.toString(),
  debit_micros: batch.debit.toString(),
  heads: batch.heads,
  receipts_v2: batch.receiptsV2,
  receipts_v1: batch.receiptsV1,
  receipts_failed: batch.receiptsFailed,
  transparency: batch.transparency,
  usage: batch.usage,
  ledger: batch.ledger,
  outbox: batch.outbox,
  holds: batch.holds,
  hold_requests: batch.holdRequests
})
