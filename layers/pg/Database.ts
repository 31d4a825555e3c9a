import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { join } from "node:path"
import { migrations } from "../../migrations/index.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { layerPglite } from "./SqlPglite.ts"

const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations) })

/**
 * Migrations run at start-up. Two gateways starting at once on one database: the loser of the migration
 * lock sees `Locked` and simply waits for the winner, then finds nothing left to do.
 */
const MigrationsLive = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.retry({
      while: (e) => e._tag === "MigrationError" && e.kind === "Locked",
      schedule: Schedule.spaced(Duration.millis(200)),
      times: 50
    }),
    Effect.withSpan("Database.migrate")
  )
)

/** PostgreSQL when `DATABASE_URL` is set, embedded PGlite in DATA_DIR/pg otherwise; migrated either way. */
export const DatabaseLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const client = config.databaseUrl !== undefined
      ? PgClient.layer({
        url: Redacted.make(config.databaseUrl),
        maxConnections: config.settings.pgMaxConnections,
        applicationName: "privacy-relay"
      })
      : layerPglite(config.dataDir === undefined ? undefined : join(config.dataDir, "pg"))
    return MigrationsLive.pipe(Layer.provideMerge(client))
  })
)

export type Sql = SqlClient.SqlClient
