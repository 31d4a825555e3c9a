import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { ReceiptSealer } from "../../services/ReceiptSealer.ts"
import { SealerQueue } from "../../services/SealerQueue.ts"
import { GENESIS_PREV_HASH } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { spanIf } from "../relay/spanIf.ts"
import { jsonColumn } from "./jsonColumn.ts"
import { STORED_COLUMNS, STORED_RECORDSET_IN_BATCH, STORED_UPSERT } from "./idempotencyRecords.ts"
import type { ChainHead } from "./settleBatch.ts"
import { chainsOf, type Job, type JobResult, TenantBatch } from "./tenantBatch.ts"

/** Most jobs of one tenant in one round; more wait for the next. */
const MAX_TENANT_BATCH = 128
/** Most jobs (all tenants together) in one statement; more wait for the next round. */
const MAX_ROUND = 512
/** Re-sign and retry this often when another process keeps moving a chain head first, then give up loudly. */
const MAX_ATTEMPTS = 50
/** Cached chain heads kept at most; past it the cache starts over (heads are re-read on demand). */
const MAX_CACHED_HEADS = 100_000

/** A job waiting for its round, with the order it arrived in (kept when a refused batch goes back in the queue). */
interface Entry {
  readonly job: Job
  readonly reply: Deferred.Deferred<JobResult>
  readonly order: number
  attempts: number
}
/** A tenant's batch in a round: its entries and the signed batch (entry i's result is `built.results[i]`). */
interface Signed {
  readonly orgId: string
  readonly entries: Array<Entry>
  readonly built: TenantBatch
}
/** relay_settle's answer for one batch. */
interface Answer {
  readonly ok: boolean
  readonly heads?: ReadonlyArray<{ chain_id: string; last_seq: number | string; last_hash: string }>
  readonly granted?: ReadonlyArray<string>
  /** Set when the batch was refused because its signing key is no longer current (relay_settle_many). */
  readonly current_kid?: string | null
}

/**
 * The sealing pipeline (one sealing actor per tenant; docs/receipts.md, "Chains and sequence
 * numbers"). Jobs (a completed call's receipts and money, a failed-call receipt, a wallet hold or its release) queue
 * per organisation. One writer fiber per process works in rounds: it signs every queued tenant's batch, then writes
 * all of them with ONE call of `relay_settle_many` (migrations/0017_settle_many.ts): one statement and one commit
 * for every tenant that queued at the same moment (group commit across tenants), each tenant's batch atomic on its
 * own. While a round's statement is in flight the writer already signs the next round on top of the heads that round
 * will leave; when the statement is back it adds whatever queued meanwhile and sends it. A job is answered only
 * after the statement that wrote it has committed, so no receipt reaches a client before it is durable.
 *
 * Sequence numbers: the writer keeps each chain's head (last seq and hash) in memory and signs on from it; the
 * function refuses a tenant's batch (writing nothing of it) unless every head is still exactly what the batch
 * expects. A batch signed ahead on a round that did not commit, or a head another gateway process moved first, is
 * refused; its jobs go back to the front of the tenant's queue and are re-signed from the heads the database
 * answered. The UNIQUE (chain_id, seq) constraint is the backstop. So any number of processes never fork a chain,
 * and a head is re-read only when another process moved it.
 *
 * Signing keys: a batch is signed with the key this process holds (ReceiptKeys.current, cached) and the function also
 * refuses it when that key is no longer current (a rotation, here or in another process: migrations/0020); the
 * current key is then loaded and the batch re-signed, so no receipt is ever written signed by a retired key.
 *
 * A statement that fails for any other reason is retried tenant by tenant, then job by job, so one bad job fails
 * alone (nothing of a failed statement was written). Closing the layer waits until every queued job is written.
 */
export const ReceiptSealerPg = Layer.effect(
  ReceiptSealer,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ReceiptKeys
    const config = yield* AppConfig
    const iss = config.publicBaseUrl
    /**
     * The writer's spans only when spans are exported: the writer serves no one request, so no request's sampling
     * decision applies, and an unexported span still costs a stack capture and a span object per round.
     */
    const traced = config.otlpEndpoint !== undefined
    const layerContext = yield* Effect.context<never>()
    /** Each chain's head as last committed (by this process, or as the database answered). */
    const heads = new Map<string, ChainHead>()
    const queues = new Map<string, Array<Entry>>()
    /** Tenants whose batch is in the statement in flight. */
    let inFlight = new Set<string>()
    let writing = false
    let arrivals = 0
    /** Jobs submitted and not yet answered (queued, being signed or in the statement in flight). */
    let pending = 0
    /** Completed when the writer stops with nothing queued, for a closing layer that waits for its writes. */
    let allWritten: Deferred.Deferred<void> | undefined

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        if (!writing) return Effect.void
        allWritten ??= Deferred.makeUnsafe<void>()
        return Deferred.await(allWritten)
      })
    )

    /** Answers a job (once: a job already answered stays as it was). */
    const reply = (entry: Entry, exit: Exit.Exit<JobResult>) => {
      if (Deferred.doneUnsafe(entry.reply, exit)) pending--
    }

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

    /**
     * Signs `entries` for `orgId`, adding them to `into` when given. `ahead` holds the heads the statement in flight
     * will leave: a batch signed on them is valid only if that statement commits (relay_settle checks).
     */
    const sign = (orgId: string, entries: ReadonlyArray<Entry>, into: Signed | undefined, ahead: ReadonlyMap<string, ChainHead>) =>
      Effect.gen(function*() {
        yield* loadHeads([...new Set(entries.flatMap((e) => chainsOf(orgId, e.job)))].filter((id) => !ahead.has(id)))
        let signed = into
        if (signed === undefined) {
          const { signer } = yield* keys.current
          const at = { iss, signer, nowMs: () => Date.now() }
          signed = { orgId, entries: [], built: new TenantBatch(orgId, at, (id) => ahead.get(id) ?? heads.get(id)!) }
        }
        const target = signed
        // A job that cannot be signed fails alone; the batch keeps the others (TenantBatch.add is all or nothing).
        yield* Effect.promise(async () => {
          for (const entry of entries) {
            try {
              await target.built.add(entry.job)
              target.entries.push(entry)
            } catch (e) {
              reply(entry, Exit.die(e))
            }
          }
        })
        return target
      })

    /** One statement for the round's batches (in organisation order); the answers in the same order. */
    const write = (batches: ReadonlyArray<Signed>) =>
      Effect.gen(function*() {
        const document = JSON.stringify(batches.map((b) => b.built.document()))
        const stored = batches.flatMap((b, i) => b.built.batch.idempotency.map((row) => ({ batch: i, ...row })))
        const rows = yield* (stored.length === 0
          ? sql<{ r: unknown }>`SELECT relay_settle_many(${document}::jsonb) AS r`
          : // The idempotent responses in the same statement, each written only when its tenant's batch was (a
            // refused batch writes nothing, and neither does this for it).
            sql<{ r: unknown }>`
              WITH settled AS (SELECT relay_settle_many(${document}::jsonb) AS r),
              stored AS (
                INSERT INTO idempotency_records (${sql.literal(STORED_COLUMNS)})
                SELECT ${sql.literal(STORED_COLUMNS)}
                FROM jsonb_to_recordset(${JSON.stringify(stored)}::jsonb) AS ${sql.literal(STORED_RECORDSET_IN_BATCH)}, settled
                WHERE (settled.r->x.batch->>'ok')::boolean
                ${sql.literal(STORED_UPSERT)}
              )
              SELECT r FROM settled`)
        return jsonColumn<ReadonlyArray<Answer>>(rows[0].r)
      }).pipe(spanIf(traced, "ReceiptSealer.round", { tenants: batches.length }))

    /** A committed batch: its heads become the known heads and every job gets its result. */
    const commitAnswered = (b: Signed, answer: Answer) => {
      for (const [chainId, head] of b.built.heads) heads.set(chainId, head)
      const granted = new Set(answer.granted ?? [])
      b.entries.forEach((entry, i) => {
        const request = entry.job.holdRequest
        const result = b.built.results[i]!
        reply(entry, Exit.succeed(request === undefined ? result : { ...result, granted: granted.has(request.id) }))
      })
    }

    /**
     * Puts entries back in their tenant's queue, in arrival order. `refused`: the database refused them (a head had
     * moved); those out of attempts fail loudly. Entries signed ahead on a round that did not commit were never
     * tried, and do not count.
     */
    const requeue = (orgId: string, entries: ReadonlyArray<Entry>, refused: boolean) => {
      const queue = queues.get(orgId) ?? []
      for (const entry of entries) {
        if (refused && ++entry.attempts >= MAX_ATTEMPTS) {
          reply(entry, Exit.die(new Error(`chain heads of ${orgId} kept moving: gave up after ${MAX_ATTEMPTS} attempts`)))
        } else {
          queue.push(entry)
        }
      }
      queue.sort((a, b) => a.order - b.order)
      if (queue.length > 0) queues.set(orgId, queue)
    }

    /**
     * What a refused batch tells: the chain heads another process moved, or that the key it was signed with was
     * rotated meanwhile (then the current key is loaded, and the batch is re-signed with it).
     */
    const learnRefusal = (answer: Answer) =>
      Effect.gen(function*() {
        for (const h of answer.heads ?? []) heads.set(h.chain_id, { seq: Number(h.last_seq), hash: h.last_hash })
        if (answer.current_kid !== undefined) yield* keys.refresh
      })

    const forgetHeads = (b: Signed) => b.entries.forEach((e) => chainsOf(b.orgId, e.job).forEach((id) => heads.delete(id)))

    /** Writes one tenant's jobs alone (re-signing on a moved head), then job by job if that fails. */
    const writeAlone = (orgId: string, entries: ReadonlyArray<Entry>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const once = (group: ReadonlyArray<Entry>) =>
          Effect.gen(function*() {
            for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
              const b = yield* sign(orgId, group, undefined, new Map())
              const [answer] = yield* write([b])
              if (answer!.ok) return commitAnswered(b, answer!)
              yield* learnRefusal(answer!)
            }
            return yield* Effect.die(new Error(`chain heads of ${orgId} kept moving: gave up after ${MAX_ATTEMPTS} attempts`))
          }).pipe(Effect.tapCause(() => Effect.sync(() => group.forEach((e) => chainsOf(orgId, e.job).forEach((id) => heads.delete(id))))))
        const exit = yield* Effect.exit(Effect.orDie(once(entries)))
        if (Exit.isSuccess(exit)) return
        if (entries.length === 1) return reply(entries[0]!, exit as Exit.Exit<never>)
        for (const entry of entries) {
          const one = yield* Effect.exit(Effect.orDie(once([entry])))
          if (Exit.isFailure(one)) reply(entry, one as Exit.Exit<never>)
        }
      })

    /**
     * Writes a round and answers its jobs: committed batches' jobs get their results, refused batches go back to
     * the queue. A failed statement is retried tenant by tenant. Answers the tenants whose batch did not commit as
     * signed (a batch signed ahead on top of theirs is void).
     */
    const writeRound = (batches: ReadonlyArray<Signed>) =>
      Effect.gen(function*() {
        const void_ = new Set<string>()
        const exit = yield* Effect.exit(write(batches))
        if (Exit.isSuccess(exit)) {
          for (const [i, b] of batches.entries()) {
            const answer = exit.value[i]!
            if (answer.ok) {
              commitAnswered(b, answer)
              continue
            }
            void_.add(b.orgId)
            yield* learnRefusal(answer)
            requeue(b.orgId, b.entries, true)
          }
          return void_
        }
        // Nothing of the statement was written. After any failure the cached heads may be wrong: read them again.
        for (const b of batches) {
          void_.add(b.orgId)
          forgetHeads(b)
        }
        if (batches.length === 1 && batches[0]!.entries.length === 1) {
          reply(batches[0]!.entries[0]!, exit as unknown as Exit.Exit<never>)
          return void_
        }
        for (const b of batches) yield* writeAlone(b.orgId, b.entries)
        return void_
      })

    /** Takes up to MAX_TENANT_BATCH queued jobs per tenant (at most MAX_ROUND in all), tenants in id order. */
    const take = (room: (orgId: string) => number) => {
      const taken = new Map<string, Array<Entry>>()
      let total = 0
      for (const orgId of [...queues.keys()].sort()) {
        if (total >= MAX_ROUND) break
        const queue = queues.get(orgId)!
        const n = Math.min(room(orgId), MAX_ROUND - total)
        if (n <= 0) continue
        const entries = queue.splice(0, n)
        if (queue.length === 0) queues.delete(orgId)
        total += entries.length
        taken.set(orgId, entries)
      }
      return taken
    }

    /** Signs taken entries into the round (a tenant's signing failure fails its entries only). */
    const signInto = (round: Map<string, Signed>, taken: Map<string, Array<Entry>>, ahead: ReadonlyMap<string, ChainHead>) =>
      Effect.gen(function*() {
        for (const [orgId, entries] of taken) {
          const signed = yield* Effect.exit(Effect.orDie(sign(orgId, entries, round.get(orgId), ahead)).pipe(
            spanIf(traced, "ReceiptSealer.sign", { jobs: entries.length })
          ))
          if (Exit.isSuccess(signed)) round.set(orgId, signed.value)
          else entries.forEach((e) => reply(e, signed as unknown as Exit.Exit<never>))
        }
      })

    /** The writer: rounds until nothing is queued or in flight. */
    const writer: Effect.Effect<void> = Effect.gen(function*() {
      let flight: { readonly fiber: Fiber.Fiber<Set<string>>; readonly heads: ReadonlyMap<string, ChainHead> } | undefined
      while (true) {
        const round = new Map<string, Signed>()
        // Signed ahead while the previous round's statement is in flight, on the heads it will leave.
        yield* signInto(round, take(() => MAX_TENANT_BATCH), flight?.heads ?? new Map())
        if (flight !== undefined) {
          const void_ = yield* Fiber.join(flight.fiber)
          flight = undefined
          inFlight = new Set()
          // Signed on a round that did not commit: back to the queue, behind that round's own jobs.
          for (const orgId of void_) {
            const b = round.get(orgId)
            if (b === undefined) continue
            round.delete(orgId)
            requeue(orgId, b.entries, false)
          }
          // What queued while the statement was in flight joins this round.
          yield* signInto(round, take((orgId) => MAX_TENANT_BATCH - (round.get(orgId)?.entries.length ?? 0)), new Map())
        }
        for (const [orgId, b] of round) if (b.entries.length === 0) round.delete(orgId)
        if (round.size === 0) {
          if (queues.size > 0) continue
          writing = false
          if (allWritten !== undefined) Deferred.doneUnsafe(allWritten, Exit.void)
          allWritten = undefined
          return
        }
        const batches = [...round.values()].sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0))
        const ahead = new Map<string, ChainHead>()
        for (const b of batches) for (const [chainId, head] of b.built.heads) ahead.set(chainId, head)
        inFlight = new Set(round.keys())
        flight = { fiber: yield* Effect.forkChild(writeRound(batches)), heads: ahead }
      }
    })

    const submit = (orgId: string, job: Job): Effect.Effect<JobResult> =>
      Effect.suspend(() => {
        const entry: Entry = { job, reply: Deferred.makeUnsafe<JobResult>(), order: arrivals++, attempts: 0 }
        pending++
        const queue = queues.get(orgId)
        if (queue === undefined) queues.set(orgId, [entry])
        else queue.push(entry)
        if (writing) return Deferred.await(entry.reply)
        writing = true
        // Detached and uninterruptible, with the layer's services (never a caller's open transaction): nothing stops
        // the writer before its queues are empty, so no caller is left waiting; the layer's finalizer waits for it.
        return Effect.forkDetach(Effect.uninterruptible(Effect.provideContext(writer, layerContext))).pipe(
          Effect.andThen(Deferred.await(entry.reply))
        )
      })
    /** True while the tenant has jobs queued or in the statement in flight: a hold may then share the next round. */
    const busy = (orgId: string) => queues.has(orgId) || inFlight.has(orgId)

    // The queue gauge of /metrics (services/SealerQueue.ts), when the layer above provides it.
    const queue = yield* Effect.serviceOption(SealerQueue)
    if (queue._tag === "Some") {
      queue.value.attach(() => ({ pendingJobs: pending, activeTenants: new Set([...queues.keys(), ...inFlight]).size }))
    }

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
