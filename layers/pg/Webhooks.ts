import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"
import {
  type WebhookAttemptView,
  type WebhookDeliveryDetail,
  WebhookDeliveryNotFound,
  type WebhookDeliveryView,
  WebhookEndpointNotFound,
  type WebhookEndpointView,
  Webhooks
} from "../../services/Webhooks.ts"
import { base32Encode } from "../../src/crypto/base32.ts"
import { webhookSettings } from "../webhooks/settings.ts"

/** `whsec_` + lowercase base32 of 32 random bytes: 256 bits, like gateway keys. */
export const newWebhookSecret = () => "whsec_" + base32Encode(crypto.getRandomValues(new Uint8Array(32)))

/** The AES-GCM additional data of an endpoint's sealed secret: a sealed secret only opens for its organisation. */
export const secretContext = (orgId: string) => `webhook-endpoint-secret:${orgId}`

const iso = (value: unknown): string => new Date(value as string | Date).toISOString()
const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value))
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))

const endpointNotFound = () => new WebhookEndpointNotFound()
const deliveryNotFound = () => new WebhookDeliveryNotFound()

const ENDPOINT_COLUMNS = "id::text AS id, url, events, status, paused_reason, created_at, updated_at"
const DELIVERY_COLUMNS =
  "id::text AS id, endpoint_id::text AS endpoint_id, event, event_id, status, attempt_count, last_http_code, last_error, " +
  "next_attempt_at, replay_of::text AS replay_of, created_at, updated_at, completed_at"

const toEndpoint = (row: Record<string, unknown>): WebhookEndpointView => ({
  id: Number(row.id),
  url: row.url as string,
  events: row.events as ReadonlyArray<string>,
  status: row.status as WebhookEndpointView["status"],
  paused_reason: (row.paused_reason as string | null) ?? null,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const toDelivery = (row: Record<string, unknown>): WebhookDeliveryView => ({
  id: Number(row.id),
  endpoint_id: Number(row.endpoint_id),
  event: row.event as string,
  event_id: row.event_id as string,
  status: row.status as WebhookDeliveryView["status"],
  attempt_count: Number(row.attempt_count),
  last_http_code: numOrNull(row.last_http_code),
  last_error: (row.last_error as string | null) ?? null,
  next_attempt_at: isoOrNull(row.next_attempt_at),
  replay_of: numOrNull(row.replay_of),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  completed_at: isoOrNull(row.completed_at)
})

const toAttempt = (row: Record<string, unknown>): WebhookAttemptView => ({
  id: Number(row.id),
  attempt: Number(row.attempt),
  http_code: numOrNull(row.http_code),
  error: (row.error as string | null) ?? null,
  started_at: iso(row.started_at),
  finished_at: isoOrNull(row.finished_at),
  duration_ms: numOrNull(row.duration_ms)
})

export const WebhooksPg = Layer.effect(
  Webhooks,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyEncryption
    const config = yield* AppConfig
    const { schedule } = webhookSettings(config)
    const firstDelay = sql`now() + (${schedule[0]!}::float8 * interval '1 millisecond')`

    const endpointRow = (orgId: string, id: number) =>
      Effect.flatMap(
        sql<Record<string, unknown>>`SELECT ${sql.literal(ENDPOINT_COLUMNS)} FROM webhook_endpoints WHERE id = ${id} AND org_id = ${orgId}`,
        (rows) => (rows[0] === undefined ? Effect.fail(endpointNotFound()) : Effect.succeed(rows[0]))
      )

    const deliveryRow = (orgId: string, id: number) =>
      Effect.flatMap(
        sql<Record<string, unknown>>`
          SELECT ${sql.literal(DELIVERY_COLUMNS)}, data FROM webhook_deliveries WHERE id = ${id} AND org_id = ${orgId}`,
        (rows) => (rows[0] === undefined ? Effect.fail(deliveryNotFound()) : Effect.succeed(rows[0]))
      )

    /** Queues one delivery outside the outbox fan-out (test and replay rows target exactly one endpoint). */
    const insertDirectDelivery = (input: {
      orgId: string
      endpointId: number | string
      event: string
      eventId: string
      data: unknown
      replayOf: number | null
    }) =>
      Effect.map(
        sql<Record<string, unknown>>`
          INSERT INTO webhook_deliveries (org_id, endpoint_id, event, event_id, data, replay_of, status, next_attempt_at)
          VALUES (${input.orgId}, ${String(input.endpointId)}, ${input.event}, ${input.eventId}, ${JSON.stringify(input.data)},
                  ${input.replayOf === null ? null : String(input.replayOf)}, 'pending', ${firstDelay})
          RETURNING ${sql.literal(DELIVERY_COLUMNS)}`,
        (rows) => toDelivery(rows[0]!)
      )

    return Webhooks.of({
      createEndpoint: (orgId, { url, events }) =>
        Effect.gen(function*() {
          const secret = newWebhookSecret()
          const envelope = yield* keys.seal(secret, secretContext(orgId))
          const [row] = yield* sql<Record<string, unknown>>`
            INSERT INTO webhook_endpoints ${sql.insert({ org_id: orgId, url, events: JSON.stringify(events), secret_envelope: envelope })}
            RETURNING ${sql.literal(ENDPOINT_COLUMNS)}`
          return { endpoint: toEndpoint(row!), secret }
        }).pipe(Effect.orDie),

      listEndpoints: (orgId) =>
        Effect.map(
          sql<Record<string, unknown>>`
            SELECT ${sql.literal(ENDPOINT_COLUMNS)} FROM webhook_endpoints WHERE org_id = ${orgId} ORDER BY id`,
          (rows) => rows.map(toEndpoint)
        ).pipe(Effect.orDie),

      getEndpoint: (orgId, id) => Effect.map(endpointRow(orgId, id), toEndpoint).pipe(Effect.catchTag("SqlError", Effect.die)),

      updateEndpoint: (orgId, id, input) =>
        Effect.gen(function*() {
          const changes: Record<string, unknown> = {}
          if (input.url !== undefined) changes.url = input.url
          if (input.events !== undefined) changes.events = JSON.stringify(input.events)
          if (Object.keys(changes).length === 0) return toEndpoint(yield* endpointRow(orgId, id))
          const rows = yield* sql<Record<string, unknown>>`
            UPDATE webhook_endpoints SET ${sql.update(changes)}, updated_at = now()
            WHERE id = ${id} AND org_id = ${orgId}
            RETURNING ${sql.literal(ENDPOINT_COLUMNS)}`
          if (rows[0] === undefined) return yield* endpointNotFound()
          return toEndpoint(rows[0])
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      deleteEndpoint: (orgId, id) =>
        Effect.gen(function*() {
          const rows = yield* sql`DELETE FROM webhook_endpoints WHERE id = ${id} AND org_id = ${orgId} RETURNING id`
          if (rows.length === 0) return yield* endpointNotFound()
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      rotateSecret: (orgId, id) =>
        Effect.gen(function*() {
          const secret = newWebhookSecret()
          const envelope = yield* keys.seal(secret, secretContext(orgId))
          const rows = yield* sql<Record<string, unknown>>`
            UPDATE webhook_endpoints SET secret_envelope = ${envelope}, updated_at = now()
            WHERE id = ${id} AND org_id = ${orgId}
            RETURNING ${sql.literal(ENDPOINT_COLUMNS)}`
          if (rows[0] === undefined) return yield* endpointNotFound()
          return { endpoint: toEndpoint(rows[0]), secret }
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      resumeEndpoint: (orgId, id) =>
        Effect.gen(function*() {
          const rows = yield* sql<Record<string, unknown>>`
            UPDATE webhook_endpoints SET status = 'active', paused_reason = NULL, updated_at = now()
            WHERE id = ${id} AND org_id = ${orgId}
            RETURNING ${sql.literal(ENDPOINT_COLUMNS)}`
          if (rows[0] === undefined) return yield* endpointNotFound()
          return toEndpoint(rows[0])
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      sendTest: (orgId, id) =>
        Effect.gen(function*() {
          yield* endpointRow(orgId, id)
          const now = new Date()
          // The spec's test event: data.endpoint_id (integer) and data.sent_at (ISO 8601).
          return yield* insertDirectDelivery({
            orgId,
            endpointId: id,
            event: "webhook.test",
            eventId: `test-${crypto.randomUUID()}`,
            data: { endpoint_id: id, sent_at: now.toISOString() },
            replayOf: null
          })
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      listDeliveries: (orgId, query) =>
        Effect.map(
          sql<Record<string, unknown>>`
            SELECT ${sql.literal(DELIVERY_COLUMNS)} FROM webhook_deliveries
            WHERE org_id = ${orgId}
              ${query.before === undefined ? sql.literal("") : sql`AND id < ${query.before}`}
              ${query.endpointId === undefined ? sql.literal("") : sql`AND endpoint_id = ${query.endpointId}`}
              ${query.status === undefined ? sql.literal("") : sql`AND status = ${query.status}`}
            ORDER BY id DESC
            LIMIT ${query.limit}`,
          (rows) => rows.map(toDelivery)
        ).pipe(Effect.orDie),

      getDelivery: (orgId, id) =>
        Effect.gen(function*() {
          const row = yield* deliveryRow(orgId, id)
          const attempts = yield* sql<Record<string, unknown>>`
            SELECT id::text AS id, attempt, http_code, error, started_at, finished_at, duration_ms
            FROM webhook_attempts WHERE delivery_id = ${id} ORDER BY attempt`
          const view = toDelivery(row)
          const detail: WebhookDeliveryDetail = {
            ...view,
            payload: {
              event: view.event,
              event_id: view.event_id,
              timestamp: Math.floor(new Date(view.created_at).getTime() / 1000),
              data: row.data
            },
            attempts: attempts.map(toAttempt)
          }
          return detail
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      replayDelivery: (orgId, id) =>
        Effect.gen(function*() {
          const row = yield* deliveryRow(orgId, id)
          return yield* insertDirectDelivery({
            orgId,
            endpointId: row.endpoint_id as string,
            event: row.event as string,
            eventId: `replay-${crypto.randomUUID()}`,
            data: row.data,
            replayOf: id
          })
        }).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  })
)
