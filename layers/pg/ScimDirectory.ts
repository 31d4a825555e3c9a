import { Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { scimPatch, type ScimPatchOperation, type ScimResource as PatchableResource } from "scim-patch"
import type { Role } from "../../services/Accounts.ts"
import { Outbox } from "../../services/Outbox.ts"
import {
  ScimDirectory,
  type ScimFailure,
  ScimInvalidFilter,
  ScimInvalidPath,
  ScimInvalidSyntax,
  ScimInvalidValue,
  ScimLastOwner,
  type ScimList,
  type ScimListQuery,
  ScimMutability,
  ScimNotFound,
  type ScimResource,
  type ScimScope,
  ScimUniqueness
} from "../../services/ScimDirectory.ts"
import { type BodyProblem, type GroupInput, isBodyProblem, parseGroupBody, parseUserBody, type UnknownAttributeProblem, type UserInput } from "../../src/scim/bodies.ts"
import { compileFilter, FilterProblem } from "../../src/scim/filter.ts"
import { roleOfGroupName, roleOfGroups } from "../../src/scim/groupRole.ts"
import { GROUP_SCHEMA, PATCH_OP_SCHEMA, USER_SCHEMA } from "../../src/scim/schemas.ts"
import { newAccountId } from "./Accounts.ts"
import { appendAudit, isoOrNull } from "./audit.ts"
import { isUniqueViolation } from "./sqlErrors.ts"

interface UserRow {
  readonly account_id: string
  readonly user_name: string
  readonly external_id: string | null
  readonly given_name: string | null
  readonly family_name: string | null
  readonly display_name: string | null
  readonly email_type: string | null
  readonly email_primary: boolean | null
  readonly active: boolean | null
  readonly email: string | null
  readonly created_at: unknown
  readonly updated_at: unknown
}

interface GroupRow {
  readonly id: string
  readonly display_name: string
  readonly external_id: string | null
  readonly role: Role
  readonly created_at: unknown
  readonly updated_at: unknown
}

const problemToFailure = (p: BodyProblem): ScimFailure =>
  p.problem === "invalidPath" ? new ScimInvalidPath({ detail: p.detail })
  : p.problem === "invalidValue" ? new ScimInvalidValue({ detail: p.detail })
  : new ScimInvalidSyntax({ detail: p.detail })

const userJson = (row: UserRow, baseUrl: string): ScimResource => ({
  schemas: [USER_SCHEMA],
  id: row.account_id,
  ...(row.external_id === null ? {} : { externalId: row.external_id }),
  userName: row.user_name,
  ...(row.given_name === null && row.family_name === null ? {} : {
    name: { ...(row.given_name === null ? {} : { givenName: row.given_name }), ...(row.family_name === null ? {} : { familyName: row.family_name }) }
  }),
  ...(row.display_name === null ? {} : { displayName: row.display_name }),
  ...(row.active === null ? {} : { active: row.active }),
  ...(row.email === null ? {} : {
    emails: [{ value: row.email, ...(row.email_type === null ? {} : { type: row.email_type }), ...(row.email_primary === null ? {} : { primary: row.email_primary }) }]
  }),
  meta: { resourceType: "User", created: isoOrNull(row.created_at), lastModified: isoOrNull(row.updated_at), location: `${baseUrl}/Users/${row.account_id}` }
})

const groupJson = (row: GroupRow, members: ReadonlyArray<{ account_id: string }>, baseUrl: string): ScimResource => ({
  schemas: [GROUP_SCHEMA],
  id: row.id,
  ...(row.external_id === null ? {} : { externalId: row.external_id }),
  displayName: row.display_name,
  members: members.map((m) => ({ value: m.account_id, $ref: `${baseUrl}/Users/${m.account_id}` })),
  meta: { resourceType: "Group", created: isoOrNull(row.created_at), lastModified: isoOrNull(row.updated_at), location: `${baseUrl}/Groups/${row.id}` }
})

/** Filter, then the page: startIndex is 1-based, a count of 0 answers only totalResults (RFC 7644 section 3.4.2.4). */
const page = (all: ReadonlyArray<ScimResource>, query: ScimListQuery, resourceType: "User" | "Group"): Effect.Effect<ScimList, ScimInvalidFilter> =>
  Effect.gen(function*() {
    let matching = all
    if (query.filter !== undefined) {
      const predicate = yield* Effect.try({
        try: () => compileFilter(query.filter!, resourceType),
        catch: (e) => new ScimInvalidFilter({ detail: e instanceof FilterProblem ? e.message : "The filter could not be read." })
      })
      matching = all.filter(predicate)
    }
    return { totalResults: matching.length, startIndex: query.startIndex, resources: matching.slice(query.startIndex - 1, query.startIndex - 1 + query.count) }
  })

/** The PATCH request body (RFC 7644 section 3.5.2) -> its operations, or why it is refused. */
const patchOperations = (body: unknown): ReadonlyArray<ScimPatchOperation> | ScimFailure => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return new ScimInvalidSyntax({ detail: "The body must be a PatchOp JSON object." })
  const record = body as Record<string, unknown>
  const schemas = record["schemas"]
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_OP_SCHEMA)) return new ScimInvalidSyntax({ detail: `schemas must be ["${PATCH_OP_SCHEMA}"].` })
  const ops = record["Operations"] ?? record["operations"]
  if (!Array.isArray(ops) || ops.length === 0) return new ScimInvalidSyntax({ detail: "Operations must be a non-empty list." })
  for (const op of ops) {
    if (typeof op !== "object" || op === null || typeof (op as { op?: unknown }).op !== "string" || !/^(add|remove|replace)$/i.test((op as { op: string }).op)) {
      return new ScimInvalidSyntax({ detail: "Each operation needs op: add, remove or replace." })
    }
    const path = (op as { path?: unknown }).path
    if (path !== undefined && typeof path !== "string") return new ScimInvalidPath({ detail: "path must be a string." })
  }
  return ops as ReadonlyArray<ScimPatchOperation>
}

/** Applies PATCH operations to the current resource with scim-patch; its errors become invalidPath / invalidValue. */
const applyPatch = (current: ScimResource, body: unknown): Effect.Effect<unknown, ScimFailure> =>
  Effect.gen(function*() {
    const ops = patchOperations(body)
    if (!Array.isArray(ops)) return yield* (ops as ScimFailure)
    return yield* Effect.try({
      try: () => scimPatch(structuredClone(current) as unknown as PatchableResource, ops as Array<ScimPatchOperation>, { mutateDocument: true, treatMissingAsAdd: true }),
      catch: (e) => {
        const scimType = (e as { scimCode?: string }).scimCode
        const detail = e instanceof Error ? e.message.slice(0, 200) : "The PATCH could not be applied."
        return scimType === "invalidPath" || scimType === "noTarget" ? new ScimInvalidPath({ detail }) : new ScimInvalidValue({ detail })
      }
    })
  })

const parsedUser = (body: unknown, unknown: UnknownAttributeProblem): Effect.Effect<UserInput, ScimFailure> => {
  const parsed = parseUserBody(body, unknown)
  return isBodyProblem(parsed) ? Effect.fail(problemToFailure(parsed)) : Effect.succeed(parsed)
}
const parsedGroup = (body: unknown, unknown: UnknownAttributeProblem): Effect.Effect<GroupInput, ScimFailure> => {
  const parsed = parseGroupBody(body, unknown)
  return isBodyProblem(parsed) ? Effect.fail(problemToFailure(parsed)) : Effect.succeed(parsed)
}

export const ScimDirectoryPg = Layer.effect(
  ScimDirectory,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    const userRows = (orgId: string, accountId?: string) =>
      sql<UserRow>`
        SELECT u.account_id, u.user_name, u.external_id, u.given_name, u.family_name, u.display_name, u.email_type, u.email_primary, u.active,
               a.email, u.created_at, u.updated_at
        FROM scim_users u JOIN accounts a ON a.id = u.account_id
        WHERE u.org_id = ${orgId} ${accountId === undefined ? sql`` : sql`AND u.account_id = ${accountId}`}
        ORDER BY u.created_at, u.account_id`

    const findUser = (scope: ScimScope, id: string) =>
      Effect.gen(function*() {
        const rows = yield* userRows(scope.orgId, id)
        if (rows.length === 0) return yield* new ScimNotFound({ resourceType: "User", id })
        return rows[0]
      })

    const groupMembers = (groupIds: ReadonlyArray<string>) =>
      groupIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<{ group_id: string; account_id: string }>)
        : sql<{ group_id: string; account_id: string }>`
            SELECT group_id, account_id FROM scim_group_members WHERE ${sql.in("group_id", groupIds)} ORDER BY account_id`

    const groupsJson = (rows: ReadonlyArray<GroupRow>, baseUrl: string) =>
      Effect.map(groupMembers(rows.map((r) => r.id)), (members) =>
        rows.map((row) => groupJson(row, members.filter((m) => m.group_id === row.id), baseUrl)))

    const findGroup = (scope: ScimScope, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<GroupRow>`SELECT id, display_name, external_id, role, created_at, updated_at FROM scim_groups WHERE id = ${id} AND org_id = ${scope.orgId}`
        if (rows.length === 0) return yield* new ScimNotFound({ resourceType: "Group", id })
        return rows[0]
      })

    /**
     * Active owners of the organisation: owner memberships not suspended, plus accounts made by self-service issuance
     * that own their home organisation without a membership row.
     */
    const ownerCount = (orgId: string) =>
      Effect.map(
        sql<{ n: number | string }>`
          SELECT (SELECT count(*) FROM memberships m JOIN accounts a ON a.id = m.account_id AND a.deleted_at IS NULL
                  WHERE m.org_id = ${orgId} AND m.role = 'owner' AND m.suspended_at IS NULL)
               + (SELECT count(*) FROM accounts a WHERE a.org_id = ${orgId} AND a.deleted_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.account_id = a.id AND m.org_id = ${orgId})) AS n`,
        (rows) => Number(rows[0]?.n ?? 0)
      )

    /**
     * One SCIM write in one transaction. A change that takes the organisation from some active owner to none fails
     * (ScimLastOwner) and rolls back with everything it did. A unique violation is the IdP sending a name or address
     * that is taken (409); any other SqlError is a bug or an outage (die).
     */
    const inTransaction = <A, R>(scope: ScimScope, effect: Effect.Effect<A, ScimFailure | SqlError.SqlError, R>, uniqueDetail: string): Effect.Effect<A, ScimFailure, R> =>
      sql.withTransaction(Effect.gen(function*() {
        // Serialises SCIM writes of one organisation, so two concurrent demotions cannot each see the other owner.
        yield* sql`SELECT id FROM organisations WHERE id = ${scope.orgId} FOR UPDATE`
        const before = yield* ownerCount(scope.orgId)
        const result = yield* effect
        if (before > 0 && (yield* ownerCount(scope.orgId)) === 0) return yield* new ScimLastOwner()
        return result
      })).pipe(
        Effect.catch((e) =>
          e._tag !== "SqlError" ? Effect.fail(e)
          : isUniqueViolation(e) ? Effect.fail(new ScimUniqueness({ detail: uniqueDetail }))
          : Effect.die(e))
      )

    /** Ends every portal session and OpenID grant/token of the account at once (it signs in again elsewhere). */
    const signOut = (accountId: string) =>
      Effect.gen(function*() {
        yield* sql`DELETE FROM portal_sessions WHERE account_id = ${accountId}`
        yield* sql`DELETE FROM oidc_payloads WHERE account_id = ${accountId}`
      })

    /** Each given member's role from the groups they are in (the highest; member when none). */
    const applyGroupRoles = (scope: ScimScope, accountIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        for (const accountId of new Set(accountIds)) {
          const roles = yield* sql<{ role: Role }>`
            SELECT g.role FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id
            WHERE m.account_id = ${accountId} AND g.org_id = ${scope.orgId}`
          const role = roleOfGroups(roles.map((r) => r.role))
          const changed = yield* sql`UPDATE memberships SET role = ${role} WHERE account_id = ${accountId} AND org_id = ${scope.orgId} AND role <> ${role} RETURNING role`
          if (changed.length > 0) yield* appendAudit(sql, { actor: scope.actor, action: "scim.role_changed", target: accountId, orgId: scope.orgId, details: { role } })
        }
      })

    /** The state change of `active`: suspend (sign out, `user.deleted`) or lift the suspension (`org.member_added`). */
    const setActive = (scope: ScimScope, accountId: string, active: boolean) =>
      Effect.gen(function*() {
        if (!active) {
          yield* sql`UPDATE memberships SET suspended_at = now() WHERE account_id = ${accountId} AND org_id = ${scope.orgId}`
          yield* signOut(accountId)
          yield* appendAudit(sql, { actor: scope.actor, action: "scim.user_deactivated", target: accountId, orgId: scope.orgId })
          yield* outbox.record({ orgId: scope.orgId, event: "user.deleted", data: { account_id: accountId, org_id: scope.orgId, reason: "deactivated" } })
        } else {
          const rows = yield* sql<{ role: Role }>`UPDATE memberships SET suspended_at = NULL WHERE account_id = ${accountId} AND org_id = ${scope.orgId} RETURNING role`
          yield* appendAudit(sql, { actor: scope.actor, action: "scim.user_reactivated", target: accountId, orgId: scope.orgId })
          yield* outbox.record({ orgId: scope.orgId, event: "org.member_added", data: { account_id: accountId, org_id: scope.orgId, role: rows[0]?.role ?? "member" } })
        }
      })

    const writeUser = (scope: ScimScope, existing: UserRow, input: UserInput) =>
      Effect.gen(function*() {
        const accountId = existing.account_id
        if (existing.email === null || existing.email.toLowerCase() !== input.email.toLowerCase()) {
          // The address is the account's, shared by every organisation it belongs to: only an account this organisation
          // alone holds may have it changed by this organisation's IdP.
          const elsewhere = yield* sql`
            SELECT 1 FROM accounts WHERE id = ${accountId} AND org_id <> ${scope.orgId}
            UNION ALL SELECT 1 FROM memberships WHERE account_id = ${accountId} AND org_id <> ${scope.orgId}`
          if (elsewhere.length > 0) {
            return yield* new ScimMutability({ detail: "The e-mail address of an account that also belongs to another organisation cannot be changed here." })
          }
          yield* sql`UPDATE accounts SET email = ${input.email} WHERE id = ${accountId}`
        }
        yield* sql`UPDATE scim_users SET ${
          sql.update({
            user_name: input.userName,
            external_id: input.externalId,
            given_name: input.givenName,
            family_name: input.familyName,
            display_name: input.displayName,
            email_type: input.emailType,
            email_primary: input.emailPrimary
          })
        }, updated_at = now() WHERE org_id = ${scope.orgId} AND account_id = ${accountId}`
        yield* sql`UPDATE scim_users SET active = ${input.active} WHERE org_id = ${scope.orgId} AND account_id = ${accountId}`
        // Only false deactivates; true and "not said" (null) are both active.
        if ((input.active !== false) !== (existing.active !== false)) yield* setActive(scope, accountId, input.active !== false)
        yield* appendAudit(sql, { actor: scope.actor, action: "scim.user_updated", target: accountId, orgId: scope.orgId })
        return userJson((yield* findUser(scope, accountId)), scope.baseUrl)
      })

    const writeGroup = (scope: ScimScope, groupId: string, before: ReadonlyArray<string>, input: GroupInput) =>
      Effect.gen(function*() {
        if (input.memberIds.length > 0) {
          const known = yield* sql<{ account_id: string }>`
            SELECT account_id FROM scim_users WHERE org_id = ${scope.orgId} AND ${sql.in("account_id", input.memberIds)}`
          const unknown = input.memberIds.find((id) => !known.some((k) => k.account_id === id))
          if (unknown !== undefined) return yield* new ScimInvalidValue({ detail: `members[].value ${unknown.slice(0, 60)} is not a User of this organisation.` })
        }
        yield* sql`UPDATE scim_groups SET ${
          sql.update({ display_name: input.displayName, external_id: input.externalId, role: roleOfGroupName(input.displayName) })
        }, updated_at = now() WHERE id = ${groupId}`
        yield* sql`DELETE FROM scim_group_members WHERE group_id = ${groupId}`
        if (input.memberIds.length > 0) {
          yield* sql`INSERT INTO scim_group_members ${sql.insert(input.memberIds.map((accountId) => ({ group_id: groupId, account_id: accountId })) as unknown as readonly [Record<string, unknown>])}`
        }
        yield* applyGroupRoles(scope, [...before, ...input.memberIds])
        const [json] = yield* groupsJson([yield* findGroup(scope, groupId)], scope.baseUrl)
        return json
      })

    const membersOf = (groupId: string) =>
      Effect.map(sql<{ account_id: string }>`SELECT account_id FROM scim_group_members WHERE group_id = ${groupId}`, (rows) => rows.map((r) => r.account_id))

    return ScimDirectory.of({
      listUsers: (scope, query) =>
        Effect.gen(function*() {
          const rows = yield* userRows(scope.orgId).pipe(Effect.orDie)
          return yield* page(rows.map((r) => userJson(r, scope.baseUrl)), query, "User")
        }),

      getUser: (scope, id) => Effect.map(findUser(scope, id), (row) => userJson(row, scope.baseUrl)).pipe(Effect.catchTag("SqlError", Effect.die)),

      createUser: (scope, body) =>
        Effect.gen(function*() {
          const input = yield* parsedUser(body, "invalidSyntax")
          return yield* inTransaction(scope, Effect.gen(function*() {
            const taken = yield* sql`SELECT 1 FROM scim_users WHERE org_id = ${scope.orgId} AND lower(user_name) = lower(${input.userName})`
            if (taken.length > 0) return yield* new ScimUniqueness({ detail: "A User with this userName already exists." })
            const accounts = yield* sql<{ id: string; org_id: string }>`
              SELECT id, org_id FROM accounts WHERE lower(email) = lower(${input.email}) AND deleted_at IS NULL FOR UPDATE`
            let accountId: string
            if (accounts.length > 0) {
              // A person who already has an account (signed up, or another organisation's): this organisation's IdP
              // links it, and it keeps the role it has here.
              accountId = accounts[0].id
              const linked = yield* sql`SELECT 1 FROM scim_users WHERE org_id = ${scope.orgId} AND account_id = ${accountId}`
              if (linked.length > 0) return yield* new ScimUniqueness({ detail: "A User with this e-mail address already exists." })
              const member = yield* sql`SELECT 1 FROM memberships WHERE account_id = ${accountId} AND org_id = ${scope.orgId}`
              if (member.length === 0) {
                // The self-service owner of this organisation gets the membership row their ownership implied, so a
                // deactivation can suspend it like any other.
                const role: Role = accounts[0].org_id === scope.orgId ? "owner" : "member"
                yield* sql`INSERT INTO memberships ${sql.insert({ account_id: accountId, org_id: scope.orgId, role })}`
                if (role === "member") {
                  yield* outbox.record({ orgId: scope.orgId, event: "org.member_added", data: { account_id: accountId, org_id: scope.orgId, role } })
                }
              }
            } else {
              accountId = newAccountId()
              // The IdP vouches for the address, as for a single sign-on (no verification mail, no trial credit).
              yield* sql`INSERT INTO accounts ${sql.insert({ id: accountId, org_id: scope.orgId, email: input.email, email_verified: true })}`
              yield* sql`INSERT INTO memberships ${sql.insert({ account_id: accountId, org_id: scope.orgId, role: "member" })}`
              yield* outbox.record({ orgId: scope.orgId, event: "user.created", data: { account_id: accountId, org_id: scope.orgId, role: "member" } })
            }
            yield* sql`INSERT INTO scim_users ${
              sql.insert({
                org_id: scope.orgId,
                account_id: accountId,
                user_name: input.userName,
                external_id: input.externalId,
                given_name: input.givenName,
                family_name: input.familyName,
                display_name: input.displayName,
                email_type: input.emailType,
                email_primary: input.emailPrimary,
                active: input.active
              })
            }`
            yield* appendAudit(sql, { actor: scope.actor, action: "scim.user_created", target: accountId, orgId: scope.orgId })
            if (input.active === false) {
              yield* setActive(scope, accountId, false)
                }
            return userJson((yield* findUser(scope, accountId)), scope.baseUrl)
          }), "A User with this userName or e-mail address already exists.")
        }),

      replaceUser: (scope, id, body) =>
        Effect.gen(function*() {
          const input = yield* parsedUser(body, "invalidSyntax")
          return yield* inTransaction(scope, Effect.gen(function*() {
            const existing = yield* findUser(scope, id)
            return yield* writeUser(scope, existing, input)
          }), "A User with this userName or e-mail address already exists.")
        }),

      patchUser: (scope, id, body) =>
        inTransaction(scope, Effect.gen(function*() {
          const existing = yield* findUser(scope, id)
          const patched = yield* applyPatch(userJson(existing, scope.baseUrl), body)
          const input = yield* parsedUser(patched, "invalidPath")
          return yield* writeUser(scope, existing, input)
        }), "A User with this userName or e-mail address already exists."),

      deleteUser: (scope, id) =>
        inTransaction(scope, Effect.gen(function*() {
          const existing = yield* findUser(scope, id)
          const accountId = existing.account_id
          const groups = yield* sql<{ group_id: string }>`
            DELETE FROM scim_group_members WHERE account_id = ${accountId}
            AND group_id IN (SELECT id FROM scim_groups WHERE org_id = ${scope.orgId}) RETURNING group_id`
          yield* sql`DELETE FROM scim_users WHERE org_id = ${scope.orgId} AND account_id = ${accountId}`
          yield* sql`DELETE FROM memberships WHERE account_id = ${accountId} AND org_id = ${scope.orgId}`
          yield* signOut(accountId)
          // An account no other organisation knows is erased as DELETE /api/v1/accounts/{id} would (docs/accounts.md):
          // its personal data goes, the row stays for the keys, ledger and audit references.
          const elsewhere = yield* sql`
            SELECT 1 FROM accounts WHERE id = ${accountId} AND org_id <> ${scope.orgId}
            UNION ALL SELECT 1 FROM memberships WHERE account_id = ${accountId}`
          if (elsewhere.length === 0) {
            if (existing.email !== null) yield* sql`DELETE FROM mail_outbox WHERE lower(to_address) = lower(${existing.email})`
            yield* sql`DELETE FROM email_verifications WHERE account_id = ${accountId}`
            yield* sql`UPDATE accounts SET email = NULL, password_hash = NULL, email_verified = false, deleted_at = now() WHERE id = ${accountId}`
          }
          yield* appendAudit(sql, { actor: scope.actor, action: "scim.user_deleted", target: accountId, orgId: scope.orgId, details: { erased: elsewhere.length === 0 } })
          yield* outbox.record({ orgId: scope.orgId, event: "user.deleted", data: { account_id: accountId, org_id: scope.orgId } })
          if (groups.length > 0) yield* sql`UPDATE scim_groups SET updated_at = now() WHERE ${sql.in("id", groups.map((g) => g.group_id))}`
        }), "conflict"),

      listGroups: (scope, query) =>
        Effect.gen(function*() {
          const rows = yield* sql<GroupRow>`
            SELECT id, display_name, external_id, role, created_at, updated_at FROM scim_groups WHERE org_id = ${scope.orgId} ORDER BY created_at, id`
          return yield* page(yield* groupsJson(rows, scope.baseUrl), query, "Group")
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      getGroup: (scope, id) =>
        Effect.gen(function*() {
          const [json] = yield* groupsJson([yield* findGroup(scope, id)], scope.baseUrl)
          return json
        }).pipe(Effect.catchTag("SqlError", Effect.die)),

      createGroup: (scope, body) =>
        Effect.gen(function*() {
          const input = yield* parsedGroup(body, "invalidSyntax")
          return yield* inTransaction(scope, Effect.gen(function*() {
            const id = `grp_${crypto.randomUUID().replaceAll("-", "")}`
            yield* sql`INSERT INTO scim_groups ${
              sql.insert({ id, org_id: scope.orgId, display_name: input.displayName, external_id: input.externalId, role: roleOfGroupName(input.displayName) })
            }`
            yield* appendAudit(sql, { actor: scope.actor, action: "scim.group_created", target: id, orgId: scope.orgId, details: { role: roleOfGroupName(input.displayName) } })
            return yield* writeGroup(scope, id, [], input)
          }), "A Group with this displayName already exists.")
        }),

      replaceGroup: (scope, id, body) =>
        Effect.gen(function*() {
          const input = yield* parsedGroup(body, "invalidSyntax")
          return yield* inTransaction(scope, Effect.gen(function*() {
            yield* findGroup(scope, id)
            const before = yield* membersOf(id)
            yield* appendAudit(sql, { actor: scope.actor, action: "scim.group_updated", target: id, orgId: scope.orgId })
            return yield* writeGroup(scope, id, before, input)
          }), "A Group with this displayName already exists.")
        }),

      patchGroup: (scope, id, body) =>
        inTransaction(scope, Effect.gen(function*() {
          const [current] = yield* groupsJson([yield* findGroup(scope, id)], scope.baseUrl)
          const before = yield* membersOf(id)
          const patched = yield* applyPatch(current, body)
          const input = yield* parsedGroup(patched, "invalidPath")
          yield* appendAudit(sql, { actor: scope.actor, action: "scim.group_updated", target: id, orgId: scope.orgId })
          return yield* writeGroup(scope, id, before, input)
        }), "A Group with this displayName already exists."),

      deleteGroup: (scope, id) =>
        inTransaction(scope, Effect.gen(function*() {
          yield* findGroup(scope, id)
          const before = yield* membersOf(id)
          yield* sql`DELETE FROM scim_groups WHERE id = ${id}`
          yield* appendAudit(sql, { actor: scope.actor, action: "scim.group_deleted", target: id, orgId: scope.orgId })
          yield* applyGroupRoles(scope, before)
        }), "conflict")
    })
  })
)
