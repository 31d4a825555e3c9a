import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { type ChainPass, type ChainVerdict, ChainVerifier } from "../../services/ChainVerifier.ts"
import { Outbox } from "../../services/Outbox.ts"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { envelopeHash } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { verifyReceipt } from "../../sdks/typescript/src/wire/receipts/verify.ts"
import { jsonColumn } from "./jsonColumn.ts"

const PAGE = 500
/** Every this many background passes one walks every chain from seq 1 (the others continue from checkpoints). */
const FULL_PASS_EVERY = 10
/** Checkpoints kept at most; past it they start over (the next pass is then a full one for those chains). */
const MAX_CHECKPOINTS = 100_000

const TABLE = { v2: "receipts_v2", v1: "receipts_v1", failed: "receipts_failed" } as const

interface Head {
  readonly chain_id: string
  readonly org_id: string
  readonly kind: keyof typeof TABLE
  readonly last_seq: string
  readonly last_hash: string
}

export const ChainVerifierPg = Layer.effect(
  ChainVerifier,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ReceiptKeys
    const outbox = yield* Outbox
    const config = yield* AppConfig
    const intervalMs = config.settings.receiptChainVerifyMs

    const imported = new Map<string, CryptoKey | undefined>()
    const keyFor = (kid: string) =>
      Effect.gen(function*() {
        if (!imported.has(kid)) imported.set(kid, yield* keys.resolveKey(kid))
        return imported.get(kid)
      })

    /**
     * The last receipt of each chain that a pass found intact. The background passes continue from there, so their
     * cost follows the receipts added since the last pass instead of everything ever sealed; every
     * FULL_PASS_EVERY-th pass (and `verifyAll`) walks every chain from seq 1 again, catching old receipts changed later.
     */
    const checkpoints = new Map<string, { readonly seq: number; readonly envelope: unknown }>()

    /** Walks one chain from `from` (or seq 1) to the head; the first problem found, or null. */
    const walk = (head: Head, from: { readonly seq: number; readonly envelope: unknown } | undefined) =>
      Effect.gen(function*() {
        const lastSeq = Number(head.last_seq)
        let previous: unknown = from?.envelope
        let expected = (from?.seq ?? 0) + 1
        for (;;) {
          const rows = yield* sql<{ seq_text: string; envelope: Record<string, unknown> }>`
            SELECT seq::text AS seq_text, envelope FROM ${sql(TABLE[head.kind])}
            WHERE chain_id = ${head.chain_id} AND seq >= ${String(expected)}::bigint AND seq <= ${String(lastSeq)}::bigint
            ORDER BY seq LIMIT ${PAGE}`.pipe(Effect.orDie)
          for (const row of rows) {
            const seq = Number(row.seq_text)
            if (seq !== expected) return { seq: expected, reason: `receipt seq ${expected} is missing` }
            const chain = row.envelope.chain as { chain_id?: unknown; seq?: unknown } | undefined
            if (chain?.chain_id !== head.chain_id || chain?.seq !== seq) {
              return { seq, reason: "stored envelope's chain position differs from its row" }
            }
            const kid = typeof row.envelope.kid === "string" ? row.envelope.kid : ""
            const key = yield* keyFor(kid)
            const result = yield* Effect.promise(() =>
              verifyReceipt(row.envelope, {
                resolveKey: async () => key,
                nowSeconds: Math.floor(Date.now() / 1000),
                previous
              })
            )
            if (!result.valid) return { seq, reason: result.reason ?? "invalid" }
            previous = row.envelope
            expected++
          }
          if (rows.length < PAGE) break
        }
        if (expected - 1 !== lastSeq) return { seq: expected, reason: `receipt seq ${expected} is missing` }
        if (previous !== undefined && (yield* Effect.promise(() => envelopeHash(previous as object))) !== head.last_hash) {
          return { seq: lastSeq, reason: "the last receipt does not hash to the chain head" }
        }
        if (previous !== undefined) checkpoints.set(head.chain_id, { seq: lastSeq, envelope: previous })
        return null
      })

    /**
     * Where a chain starts after retention dropped its oldest receipts: the last dropped receipt, kept signed in
     * receipt_chain_anchors. It is checked like a receipt (signature, position) and must hash to its recorded hash;
     * the first stored receipt then has to link to it exactly as it linked when the anchor was still stored.
     */
    const anchors = Effect.gen(function*() {
      const rows = yield* sql<{ chain_id: string; seq_text: string; hash: string; envelope: unknown }>`
        SELECT chain_id, seq::text AS seq_text, hash, envelope FROM receipt_chain_anchors`.pipe(Effect.orDie)
      return new Map(rows.map((r) => [r.chain_id, { seq: Number(r.seq_text), hash: r.hash, envelope: jsonColumn<Record<string, unknown>>(r.envelope) }]))
    })

    const anchorProblem = (chainId: string, anchor: { readonly seq: number; readonly hash: string; readonly envelope: Record<string, unknown> }) =>
      Effect.gen(function*() {
        const chain = anchor.envelope.chain as { chain_id?: unknown; seq?: unknown } | undefined
        if (chain?.chain_id !== chainId || chain?.seq !== anchor.seq) return "the retention anchor's chain position differs from its row"
        if ((yield* Effect.promise(() => envelopeHash(anchor.envelope))) !== anchor.hash) return "the retention anchor does not hash to its recorded hash"
        const key = yield* keyFor(typeof anchor.envelope.kid === "string" ? anchor.envelope.kid : "")
        const result = yield* Effect.promise(() =>
          verifyReceipt(anchor.envelope, { resolveKey: async () => key, nowSeconds: Math.floor(Date.now() / 1000) })
        )
        return result.valid ? null : `the retention anchor does not verify: ${result.reason ?? "invalid"}`
      })

    const recordBreak = (head: Head, seq: number, reason: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const opened = yield* sql<{ id: string }>`
          INSERT INTO chain_incidents ${sql.insert({ chain_id: head.chain_id, org_id: head.org_id, seq: String(seq), reason })}
          ON CONFLICT (chain_id) WHERE repaired_at IS NULL DO NOTHING
          RETURNING id::text AS id`
        if (opened.length === 0) return
        yield* outbox.record({
          orgId: head.org_id,
          event: "chain.broken",
          data: { chain_id: head.chain_id, seq, reason, incident_id: opened[0]!.id }
        })
        yield* Effect.logWarning("receipt chain broken").pipe(Effect.annotateLogs({ chain_id: head.chain_id, seq, reason }))
      })).pipe(Effect.orDie)

    const recordRepair = (head: Head) =>
      sql.withTransaction(Effect.gen(function*() {
        const closed = yield* sql<{ id: string }>`
          UPDATE chain_incidents SET repaired_at = now()
          WHERE chain_id = ${head.chain_id} AND repaired_at IS NULL
          RETURNING id::text AS id`
        if (closed.length === 0) return
        yield* outbox.record({
          orgId: head.org_id,
          event: "chain.repaired",
          data: { chain_id: head.chain_id, seq: Number(head.last_seq), incident_id: closed[0]!.id }
        })
        yield* Effect.logInfo("receipt chain repaired").pipe(Effect.annotateLogs({ chain_id: head.chain_id }))
      })).pipe(Effect.orDie)

    let lastPass: ChainPass | undefined

    /** One pass over every chain: `full` walks each from seq 1, otherwise from its checkpoint. */
    const pass = (full: boolean) => Effect.gen(function*() {
      const started = Date.now()
      const heads = yield* sql<Head>`
        SELECT chain_id, org_id, kind, last_seq::text AS last_seq, last_hash FROM receipt_chains ORDER BY chain_id`.pipe(
        Effect.orDie
      )
      const open = new Set((yield* sql<{ chain_id: string }>`
        SELECT chain_id FROM chain_incidents WHERE repaired_at IS NULL`.pipe(Effect.orDie)).map((r) => r.chain_id))
      const anchored = yield* anchors
      const verdicts: Array<ChainVerdict> = []
      for (const head of heads) {
        const checkpoint = checkpoints.get(head.chain_id)
        const anchor = anchored.get(head.chain_id)
        // A chain with an open incident is always walked whole (from its anchor, if retention set one): only that
        // can show it repaired.
        const fromCheckpoint = !(full || open.has(head.chain_id) || checkpoint === undefined || checkpoint.seq > Number(head.last_seq))
        checkpoints.delete(head.chain_id)
        const anchorBroken = fromCheckpoint || anchor === undefined ? null : yield* anchorProblem(head.chain_id, anchor)
        const problem = anchorBroken !== null
          ? { seq: anchor!.seq, reason: anchorBroken }
          : yield* walk(head, fromCheckpoint ? checkpoint : anchor)
        if (problem === null) {
          if (open.has(head.chain_id)) yield* recordRepair(head)
          verdicts.push({ chain_id: head.chain_id, org_id: head.org_id, checked: Number(head.last_seq), ok: true, seq: null, reason: null })
        } else {
          yield* recordBreak(head, problem.seq, problem.reason)
          verdicts.push({
            chain_id: head.chain_id,
            org_id: head.org_id,
            checked: problem.seq,
            ok: false,
            seq: problem.seq,
            reason: problem.reason
          })
        }
      }
      if (checkpoints.size > MAX_CHECKPOINTS) checkpoints.clear()
      lastPass = {
        finishedAt: new Date().toISOString(),
        full,
        chains: verdicts.length,
        broken: verdicts.filter((v) => !v.ok).length,
        durationMs: Date.now() - started
      }
      return verdicts
    }).pipe(Effect.withSpan("ChainVerifier.pass", { attributes: { full } }))

    const verifyAll = pass(true)

    if (intervalMs > 0) {
      let passes = 0
      const background = Effect.suspend(() => pass(passes++ % FULL_PASS_EVERY === FULL_PASS_EVERY - 1))
      yield* Effect.forkScoped(
        Effect.repeat(
          background.pipe(Effect.catchCause((cause) => Effect.logWarning("receipt chain verification failed", cause))),
          Schedule.spaced(Duration.millis(intervalMs))
        ).pipe(Effect.delay(Duration.millis(intervalMs)))
      )
    }

    return ChainVerifier.of({ verifyAll, lastPass: Effect.sync(() => lastPass) })
  })
)
