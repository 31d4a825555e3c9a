import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type Actor, type KeyChanges, KeyManagement, type KeyRecord, type MintedKey } from "../../services/KeyManagement.ts"
import type { PortalPrincipal } from "../../services/PortalTokens.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { invalid, optionalString, rejectUnknownFields } from "../../src/http/validate.ts"
import { isScope, SCOPES } from "../../src/keys/scopes.ts"
import { findModel } from "../../src/providers/catalogue.ts"
import { requirePortal } from "./auth.ts"
import { idempotentPortalRoute } from "./idempotent.ts"
import { readDocumentedBody } from "./body.ts"
import { apiRoute } from "./api/apiRoutes.ts"

/** The audit `actor` of a portal principal: a session (`account:<id>`) or a portal token (`portal-token:<id>`). */
export const actorOf = (principal: PortalPrincipal): Actor => ({
  id: principal.tokenId.startsWith("account:") ? principal.tokenId : `portal-token:${principal.tokenId}`,
  orgId: principal.orgId
})

const MAX_MODELS = 64

const stringList = (body: Record<string, unknown>, field: string, check: (s: string) => string | undefined) => {
  const v = body[field]
  if (v === undefined) return undefined
  if (v === null) return null
  if (!Array.isArray(v)) return invalid(field, `"${field}" must be an array of strings or null.`)
  if (v.length > MAX_MODELS) return invalid(field, `"${field}" has at most ${MAX_MODELS} entries.`)
  for (let i = 0; i < v.length; i++) {
    const item = v[i]
    if (typeof item !== "string") return invalid(`${field}[${i}]`, `"${field}[${i}]" must be a string.`)
    const problem = check(item)
    if (problem !== undefined) return invalid(`${field}[${i}]`, problem)
  }
  return [...new Set(v as Array<string>)]
}

/**
 * The editable fields of a key. With `replace` (PUT) an absent field is cleared (null); otherwise (PATCH, create)
 * an absent field is left alone / defaulted.
 */
const parseChanges = (body: Record<string, unknown>, allowed: ReadonlyArray<string>, replace: boolean): (KeyChanges & { orgId?: string }) | ApiError => {
  const unknownField = rejectUnknownFields(body, allowed)
  if (unknownField) return unknownField
  const name = body.name === null ? null : optionalString(body, "name", 100)
  if (name instanceof ApiError) return name
  const permissions = stringList(body, "permissions", (s) =>
    isScope(s) ? undefined : `Unknown permission "${s}". The scope vocabulary is: ${SCOPES.join(", ")}.`)
  if (permissions instanceof ApiError) return permissions
  const models = stringList(body, "models", (s) => (findModel(s) === undefined ? `Unknown model "${s}".` : undefined))
  if (models instanceof ApiError) return models
  let rotationDays: number | null | undefined
  const rd = body.rotation_days
  if (rd === null) rotationDays = null
  else if (rd !== undefined) {
    if (typeof rd !== "number" || !Number.isInteger(rd) || rd < 1 || rd > 3650) {
      return invalid("rotation_days", `"rotation_days" must be an integer from 1 to 3650, or null.`)
    }
    rotationDays = rd
  }
  const orgId = optionalString(body, "org_id", 100)
  if (orgId instanceof ApiError) return orgId
  const orNull = <A>(v: A | undefined) => (replace && v === undefined ? null : v)
  return {
    name: orNull(name),
    permissions: orNull(permissions),
    models: orNull(models),
    rotationDays: orNull(rotationDays),
    ...(orgId === undefined ? {} : { orgId })
  }
}

const keyJson = (k: KeyRecord) => ({
  id: k.id,
  org_id: k.orgId,
  key_prefix: k.keyPrefix,
  name: k.name,
  tier: k.tier,
  permissions: k.permissions,
  models: k.models,
  status: k.status,
  rotation_days: k.rotationDays,
  rotation_due: k.rotationDueAt !== null,
  rotation_due_at: k.rotationDueAt,
  replaced_by: k.replacedBy,
  created_at: k.createdAt,
  last_used_at: k.lastUsedAt,
  revoked_at: k.revokedAt
})

const mintedJson = (m: MintedKey, extra: Record<string, unknown> = {}) =>
  HttpServerResponse.jsonUnsafe(
    {
      id: m.record.id,
      api_key: m.apiKey,
      key_prefix: m.record.keyPrefix,
      name: m.record.name,
      tier: m.record.tier,
      permissions: m.record.permissions,
      models: m.record.models,
      org_id: m.record.orgId,
      rotation_days: m.record.rotationDays,
      ...extra,
      warning: "This key is shown once and cannot be recovered. Store it now."
    },
    { status: 201, headers: { "cache-control": "no-store" } }
  )

/**
 * Key management for the portal (docs/keys.md): create, list, update, rotate, revoke, and the
 * audit log. Portal session or portal token only; a gateway key gets 401 `portal_auth_required`.
 */
export const KeyRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const keys = yield* KeyManagement

  yield* router.add("POST", "/api/keys", idempotentPortalRoute("ability:keys.write", "keys.create", Effect.gen(function*() {
    const actor = actorOf(yield* requirePortal("ability:keys.write"))
    const input = parseChanges(yield* readDocumentedBody(apiRoute("POST", "/api/keys")), ["name", "permissions", "models", "rotation_days", "org_id"], false)
    if (input instanceof ApiError) return yield* input
    return mintedJson(yield* keys.create(actor, input))
  })))

  yield* router.add("GET", "/api/v1/keys", Effect.gen(function*() {
    const actor = actorOf(yield* requirePortal("ability:keys.read"))
    const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    const list = yield* keys.list(actor, search.get("org_id") ?? undefined)
    return HttpServerResponse.jsonUnsafe({ keys: list.map(keyJson) }, { headers: { "cache-control": "no-store" } })
  }))

  const updateRoute = (replace: boolean) =>
    Effect.gen(function*() {
      const actor = actorOf(yield* requirePortal("ability:keys.write"))
      const { id } = yield* HttpRouter.params
      const changes = parseChanges(yield* readDocumentedBody(apiRoute(replace ? "PUT" : "PATCH", "/api/keys/:id")), ["name", "permissions", "models", "rotation_days"], replace)
      if (changes instanceof ApiError) return yield* changes
      return HttpServerResponse.jsonUnsafe(keyJson(yield* keys.update(actor, id!, changes)))
    })
  yield* router.add("PUT", "/api/keys/:id", idempotentPortalRoute("ability:keys.write", "keys.replace", updateRoute(true)))
  yield* router.add("PATCH", "/api/keys/:id", idempotentPortalRoute("ability:keys.write", "keys.update", updateRoute(false)))

  yield* router.add("POST", "/api/keys/:id/rotate", idempotentPortalRoute("ability:keys.write", "keys.rotate", Effect.gen(function*() {
    const actor = actorOf(yield* requirePortal("ability:keys.write"))
    const { id } = yield* HttpRouter.params
    return mintedJson(yield* keys.rotate(actor, id!), { replaces: id })
  })))

  yield* router.add("POST", "/api/keys/:id/revoke", Effect.gen(function*() {
    const actor = actorOf(yield* requirePortal("ability:keys.write"))
    const { id } = yield* HttpRouter.params
    return HttpServerResponse.jsonUnsafe(keyJson(yield* keys.revoke(actor, id!)))
  }))

  yield* router.add("GET", "/api/v1/audit", Effect.gen(function*() {
    yield* requirePortal("ability:admin")
    const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    const limit = Number(search.get("limit") ?? 100)
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return yield* invalid("limit", "limit is an integer from 1 to 1000.")
    const before = search.get("before") ?? undefined
    if (before !== undefined && !/^[0-9]{1,18}$/.test(before)) return yield* invalid("before", "before is an audit row id.")
    const rows = yield* keys.audit({ orgId: search.get("org_id") ?? undefined, limit, before })
    return HttpServerResponse.jsonUnsafe({
      entries: rows.map((r) => ({ id: r.id, at: r.at, actor: r.actor, action: r.action, target: r.target, org_id: r.orgId, details: r.details })),
      next_before: rows.length === limit ? rows[rows.length - 1].id : null
    })
  }))
}))
