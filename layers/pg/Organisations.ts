import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Organisations, ParentOrganisationNotFound } from "../../services/Organisations.ts"

export const newOrgId = () => `org_${crypto.randomUUID().replaceAll("-", "")}`

/** Inserts an organisation and its empty wallet; to be run inside the caller's transaction. */
export const insertOrganisation = (sql: SqlClient.SqlClient, input: { name: string; parentId?: string }) =>
  Effect.gen(function*() {
    const orgId = newOrgId()
    yield* sql`INSERT INTO organisations ${sql.insert({ id: orgId, name: input.name, parent_id: input.parentId ?? null })}`
    yield* sql`INSERT INTO wallets ${sql.insert({ org_id: orgId, balance_micros: "0" })}`
    return orgId
  })

export const OrganisationsPg = Layer.effect(
  Organisations,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const exists = (orgId: string) =>
      sql<{ id: string }>`SELECT id FROM organisations WHERE id = ${orgId}`.pipe(Effect.map((r) => r.length > 0), Effect.orDie)
    return Organisations.of({
      exists,
      create: (input) =>
        Effect.gen(function*() {
          if (input.parentId !== undefined && !(yield* exists(input.parentId))) {
            return yield* new ParentOrganisationNotFound({ parentId: input.parentId })
          }
          const orgId = yield* sql.withTransaction(insertOrganisation(sql, input)).pipe(Effect.orDie)
          return { orgId }
        })
    })
  })
)
