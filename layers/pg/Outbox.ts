import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Outbox } from "../../services/Outbox.ts"

export const OutboxPg = Layer.effect(
  Outbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Outbox.of({
      record: ({ orgId, event, data }) => {
        const id = crypto.randomUUID()
        return sql`INSERT INTO outbox_events ${sql.insert({ id, org_id: orgId, event, data: JSON.stringify(data) })}`.pipe(
          Effect.as(id),
          Effect.orDie
        )
      }
    })
  })
)
