import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../services/AppConfig.ts"
import { Organisations } from "../services/Organisations.ts"
import { PortalTokens } from "../services/PortalTokens.ts"

/**
 * First start with embedded storage: create the operator organisation and an `ability:admin` portal token, and
 * write it to DATA_DIR/admin-token (mode 0600) for `programs/cli.ts`, which cannot open PGlite while the gateway
 * holds it. Never printed, never logged.
 */
export const BootstrapAdminToken = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (config.databaseUrl !== undefined || config.dataDir === undefined) return
    const path = join(config.dataDir, "admin-token")
    if (existsSync(path)) return
    const sql = yield* SqlClient.SqlClient
    const existing = yield* sql<{ id: string }>`SELECT id FROM organisations WHERE name = 'operator' AND parent_id IS NULL`.pipe(Effect.orDie)
    const orgId = existing[0]?.id ?? (yield* (yield* Organisations).create({ name: "operator" })).orgId
    const { token } = yield* (yield* PortalTokens).create({ orgId, abilities: ["ability:admin"], name: "bootstrap admin" })
    yield* Effect.sync(() => {
      mkdirSync(config.dataDir!, { recursive: true, mode: 0o700 })
      writeFileSync(path, token + "\n", { mode: 0o600 })
      chmodSync(path, 0o600)
    })
    yield* Effect.logInfo("wrote bootstrap admin token").pipe(Effect.annotateLogs({ path }))
  }).pipe(Effect.orDie)
)
