import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Mailer } from "../../services/Mailer.ts"

/**
 * Development mail transport: messages are stored in the `mail_outbox` table instead of being sent, so a developer
 * (or a test) can read the verification link there. Used whenever `SMTP_URL` is not set. Called inside a
 * transaction, the row commits or rolls back with it.
 */
export const DevOutboxMailer = Layer.effect(
  Mailer,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Mailer.of({
      transport: "dev-outbox",
      send: (message) =>
        sql`INSERT INTO mail_outbox ${sql.insert({ to_address: message.to, subject: message.subject, body_text: message.text })}`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
