import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { matchesSubscription } from "../../src/webhooks/events.ts"
import { MAX_ATTEMPTS } from "../../src/webhooks/schedule.ts"

/**
 * The dispatcher's SQL: fan-out of outbox events to deliveries, claiming due deliveries, and recording each
 * attempt's result. Every step that decides "who does this" runs in a short transaction with
 * `FOR UPDATE SKIP LOCKED`, so any number of dispatchers (processes or fibers) share the work without
 * sending anything twice. Times come from the database clock, so nodes with skewed clocks agree.
 */

/** Most outbox events one fan-out takes; a full batch means more may be waiting. */
export const FAN_OUT_BATCH = 100

const delayAfterNow = (sql: SqlClient.SqlClient, ms: number) => sql`now() + (${ms}::float8 * interval '1 millisecond')`

const toMillis = (value: unknown) => new Date(value as string | Date).getTime()

/**
 * Turns pending outbox events into one delivery row per (event, active endpoint of the event's organisation
 * whose subscription matches and which existed when the event was recorded), due after `firstDelayMs`.
 * Returns how many events were handled. `ON CONFLICT DO NOTHING` on (event_id, endpoint_id) makes a repeated
 * fan-out harmless.
 */
export const fanOutPending = (sql: SqlClient.SqlClient, firstDelayMs: number) =>
  sql.withTransaction(Effect.gen(function*() {
    const events = yield* sql<{ id: string; org_id: string; event: string; data: unknown; created_at: unknown }>`
      SELECT id, org_id, event, data, created_at FROM outbox_events
      WHERE fanned_out_at IS NULL
      ORDER BY created_at, id
      LIMIT ${FAN_OUT_BATCH}
      FOR UPDATE SKIP LOCKED`
    if (events.length === 0) return 0
    const orgIds = [...new Set(events.map((e) => e.org_id))]
    const endpoints = yield* sql<{ id: string; org_id: string; events: ReadonlyArray<string>; created_at: unknown }>`
      SELECT id::text AS id, org_id, events, created_at FROM webhook_endpoints
      WHERE status = 'active' AND org_id IN ${sql.in(orgIds)}`
    const [due] = yield* sql<{ at: string }>`SELECT (${delayAfterNow(sql, firstDelayMs)})::text AS at`
    const rows = events.flatMap((event) =>
      endpoints
        .filter((endpoint) =>
          endpoint.org_id === event.org_id &&
          toMillis(endpoint.created_at) <= toMillis(event.created_at) &&
          matchesSubscription(endpoint.events, event.event)
        )
        .map((endpoint) => ({
          org_id: event.org_id,
          endpoint_id: endpoint.id,
          event: event.event,
          event_id: event.id,
          data: JSON.stringify(event.data),
          status: "pending",
          next_attempt_at: due!.at
        }))
    )
    if (rows.length > 0) {
      yield* sql`INSERT INTO webhook_deliveries ${sql.insert(rows as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>])} ON CONFLICT (event_id, endpoint_id) DO NOTHING`
    }
    yield* sql`UPDATE outbox_events SET fanned_out_at = now() WHERE id IN ${sql.in(events.map((e) => e.id))}`
    return events.length
  }))

/** One attempt a dispatcher has claimed: it alone sends attempt number `attempt` of this delivery. */
export interface ClaimedAttempt {
  readonly deliveryId: string
  /** Id of the attempt row: the X-Service-Webhook-Delivery-Id of this attempt. */
  readonly attemptId: string
  readonly attempt: number
  readonly endpointId: string
  readonly orgId: string
  readonly event: string
  readonly eventId: string
  readonly data: Readonly<Record<string, unknown>>
}

/**
 * Claims up to `limit` due deliveries of active endpoints. In one transaction: lock them (skipping rows another
 * dispatcher holds), count the attempt, push `next_attempt_at` forward by `leaseMs` (so nobody else finds them
 * due while this attempt runs; if this process dies, the lease expires and the next attempt follows), close
 * attempt rows a dead dispatcher left open, and create the new attempt rows.
 */
export const claimDue = (sql: SqlClient.SqlClient, limit: number, leaseMs: number) =>
  sql.withTransaction(Effect.gen(function*() {
    // A 7th attempt whose dispatcher died cannot be retried: the delivery is dead, as after any 7th failure.
    yield* sql`
      UPDATE webhook_deliveries
      SET status = 'dead', next_attempt_at = NULL, completed_at = now(), updated_at = now(),
          last_error = 'last attempt abandoned: the dispatcher stopped before it finished'
      WHERE status IN ('pending', 'retrying') AND attempt_count >= ${MAX_ATTEMPTS} AND next_attempt_at <= now()`
    const due = yield* sql<{ id: string; attempt_count: number; endpoint_id: string; org_id: string; event: string; event_id: string; data: Record<string, unknown> }>`
      SELECT d.id::text AS id, d.attempt_count, d.endpoint_id::text AS endpoint_id, d.org_id, d.event, d.event_id, d.data
      FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
        AND d.attempt_count < ${MAX_ATTEMPTS} AND e.status = 'active'
      ORDER BY d.next_attempt_at, d.id
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED`
    if (due.length === 0) return [] as Array<ClaimedAttempt>
    const ids = due.map((d) => d.id)
    yield* sql`
      UPDATE webhook_deliveries
      SET attempt_count = attempt_count + 1, next_attempt_at = ${delayAfterNow(sql, leaseMs)}, updated_at = now()
      WHERE id IN ${sql.in(ids)}`
    yield* sql`
      UPDATE webhook_attempts SET finished_at = now(), error = 'abandoned: the dispatcher stopped during this attempt'
      WHERE delivery_id IN ${sql.in(ids)} AND finished_at IS NULL`
    const attempts = yield* sql<{ id: string; delivery_id: string }>`
      INSERT INTO webhook_attempts ${sql.insert(due.map((d) => ({ delivery_id: d.id, attempt: Number(d.attempt_count) + 1 })) as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>])}
      RETURNING id::text AS id, delivery_id::text AS delivery_id`
    const attemptIdOf = new Map(attempts.map((a) => [a.delivery_id, a.id]))
    return due.map((d): ClaimedAttempt => ({
      deliveryId: d.id,
      attemptId: attemptIdOf.get(d.id)!,
      attempt: Number(d.attempt_count) + 1,
      endpointId: d.endpoint_id,
      orgId: d.org_id,
      event: d.event,
      eventId: d.event_id,
      data: d.data
    }))
  }))

/** The endpoint's current URL and sealed secret, read right before each attempt (so a rotation applies at once). */
export const endpointForAttempt = (sql: SqlClient.SqlClient, endpointId: string) =>
  Effect.map(
    sql<{ url: string; secret_envelope: string; org_id: string }>`
      SELECT url, secret_envelope, org_id FROM webhook_endpoints WHERE id = ${endpointId}`,
    (rows) => rows[0]
  )

export interface AttemptResult {
  readonly httpCode: number | null
  /** Why no usable answer arrived (timeout, network, SSRF refusal); null when the receiver answered. */
  readonly error: string | null
  readonly durationMs: number
  /** The delivery's next state, from the state table (classifyOutcome). */
  readonly next:
    | { readonly state: "delivered" }
    | { readonly state: "dead"; readonly pauseEndpoint: boolean; readonly lastError: string | null }
    | { readonly state: "retrying"; readonly delayMs: number; readonly lastError: string | null }
}

/**
 * Records one attempt's result. The delivery row changes only if it still belongs to this attempt
 * (`attempt_count` unchanged), so a result arriving after the lease ran out cannot overwrite a later attempt.
 */
export const recordAttempt = (sql: SqlClient.SqlClient, claimed: ClaimedAttempt, result: AttemptResult) =>
  sql.withTransaction(Effect.gen(function*() {
    yield* sql`
      UPDATE webhook_attempts SET http_code = ${result.httpCode}, error = ${result.error}, finished_at = now(),
        duration_ms = ${result.durationMs}
      WHERE id = ${claimed.attemptId}`
    const next = result.next
    if (next.state === "retrying") {
      yield* sql`
        UPDATE webhook_deliveries
        SET status = 'retrying', last_http_code = ${result.httpCode}, last_error = ${next.lastError},
            next_attempt_at = ${delayAfterNow(sql, next.delayMs)}, updated_at = now()
        WHERE id = ${claimed.deliveryId} AND attempt_count = ${claimed.attempt}`
      return
    }
    yield* sql`
      UPDATE webhook_deliveries
      SET status = ${next.state}, last_http_code = ${result.httpCode},
          last_error = ${next.state === "dead" ? next.lastError : null},
          next_attempt_at = NULL, completed_at = now(), updated_at = now()
      WHERE id = ${claimed.deliveryId} AND attempt_count = ${claimed.attempt}`
    if (next.state === "dead" && next.pauseEndpoint) {
      yield* sql`
        UPDATE webhook_endpoints
        SET status = 'paused', paused_reason = 'the receiver answered 410 Gone', updated_at = now()
        WHERE id = ${claimed.endpointId}`
    }
  }))
