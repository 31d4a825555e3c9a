import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { ScimDirectory, type ScimFailure, type ScimList, type ScimListQuery, type ScimScope } from "../../services/ScimDirectory.ts"
import { ScimTokens, type ScimUnauthorized } from "../../services/ScimTokens.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import {
  ERROR_SCHEMA,
  LIST_RESPONSE_SCHEMA,
  MAX_PAGE_SIZE,
  resourceTypeDocuments,
  SCIM_CONTENT_TYPE,
  schemaDocuments,
  serviceProviderConfig
} from "../../src/scim/schemas.ts"
import { readBodyBytes } from "./body.ts"

/** A SCIM error body (RFC 7644 section 3.12): `status` is a string, `scimType` names the kind of bad request. */
const scimError = (status: number, detail: string, scimType?: string) =>
  HttpServerResponse.jsonUnsafe(
    { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType === undefined ? {} : { scimType }), detail },
    { status, contentType: SCIM_CONTENT_TYPE, headers: status === 401 ? { "www-authenticate": 'Bearer realm="scim"' } : {} }
  )

/** Every failure of a SCIM route, as SCIM answers it (never the gateway's own error envelope). */
const failureResponse = (failure: ScimFailure | ScimUnauthorized | ApiError | BadRequest) => {
  switch (failure._tag) {
    case "ScimUnauthorized":
      return scimError(401, "A valid SCIM bearer token (scim_...) is required.")
    case "ScimNotFound":
      return scimError(404, `${failure.resourceType} ${failure.id.slice(0, 80)} not found.`)
    case "ScimInvalidFilter":
      return scimError(400, failure.detail, "invalidFilter")
    case "ScimInvalidSyntax":
      return scimError(400, failure.detail, "invalidSyntax")
    case "ScimInvalidPath":
      return scimError(400, failure.detail, "invalidPath")
    case "ScimInvalidValue":
      return scimError(400, failure.detail, "invalidValue")
    case "ScimMutability":
      return scimError(400, failure.detail, "mutability")
    case "ScimUniqueness":
      return scimError(409, failure.detail, "uniqueness")
    case "ScimLastOwner":
      return scimError(400, "This change would leave the organisation without an active owner; nothing was changed.", "invalidValue")
    case "BadRequest":
      return scimError(400, failure.detail, failure.scimType)
    case "ApiError":
      return scimError(failure.status, failure.message)
  }
}

/** A query parameter or body the route itself refuses (before any service runs). */
interface BadRequest {
  readonly _tag: "BadRequest"
  readonly detail: string
  readonly scimType: string
}
const badRequest = (detail: string, scimType: string): BadRequest => ({ _tag: "BadRequest", detail, scimType })

const json = (body: unknown, status = 200, location?: string) =>
  HttpServerResponse.jsonUnsafe(body, { status, contentType: SCIM_CONTENT_TYPE, headers: location === undefined ? {} : { location } })

/** The request's organisation from its bearer token, and where its resources live. */
const authenticate = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const header = request.headers["authorization"] ?? ""
  const match = /^Bearer\s+(\S+)$/i.exec(header)
  const tokens = yield* ScimTokens
  const { orgId, tokenId } = yield* tokens.authenticate(match?.[1] ?? "")
  const config = yield* AppConfig
  // PUBLIC_BASE_URL when the operator set it (behind a proxy it is the only right answer); otherwise the address the
  // IdP called, which on a development gateway with PORT=0 is the only one that reaches it.
  const origin = config.settings.publicBaseUrl ?? `http://${request.headers["host"] ?? new URL(config.publicBaseUrl).host}`
  return { orgId, actor: `scim:${tokenId}`, baseUrl: `${origin.replace(/\/+$/, "")}/scim/v2` } satisfies ScimScope
})

const readJson = Effect.gen(function*() {
  const bytes = yield* readBodyBytes
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as unknown
  } catch {
    return yield* Effect.fail(badRequest("The body is not valid JSON.", "invalidSyntax"))
  }
})

const positiveInt = (raw: string | null, name: string, fallback: number, min: number) => {
  if (raw === null || raw === "") return fallback
  if (!/^-?\d{1,9}$/.test(raw)) return badRequest(`${name} must be an integer.`, "invalidValue")
  // RFC 7644 section 3.4.2.4: startIndex below 1 is read as 1, a negative count as 0.
  return Math.max(min, Number(raw))
}

const listQuery = Effect.gen(function*() {
  const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
  const startIndex = positiveInt(search.get("startIndex"), "startIndex", 1, 1)
  if (typeof startIndex !== "number") return yield* Effect.fail(startIndex)
  const count = positiveInt(search.get("count"), "count", 100, 0)
  if (typeof count !== "number") return yield* Effect.fail(count)
  const filter = search.get("filter") ?? undefined
  return { filter, startIndex, count: Math.min(count, MAX_PAGE_SIZE) } satisfies ScimListQuery
})

/**
 * `attributes` / `excludedAttributes` (RFC 7644 section 3.4.2.5) on top-level attributes: `id`, `schemas` and `meta`
 * always stay. Entra asks `excludedAttributes=members` when it reads groups.
 */
const projection = (attributes: ReadonlyArray<string> | undefined, excludedAttributes: ReadonlyArray<string> | undefined) => {
  const names = (list: ReadonlyArray<string> | undefined) => list?.map((s) => s.trim().replace(/^urn:.*:/, "").split(".")[0].toLowerCase()).filter(Boolean)
  const only = names(attributes)
  const excluded = names(excludedAttributes) ?? []
  return (resource: Readonly<Record<string, unknown>>) =>
    Object.fromEntries(Object.entries(resource).filter(([key]) => {
      const lower = key.toLowerCase()
      if (lower === "id" || lower === "schemas" || lower === "meta") return true
      if (only !== undefined && only.length > 0) return only.includes(lower)
      return !excluded.includes(lower)
    }))
}

const project = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const search = new URL(request.url, "http://x").searchParams
  return projection(search.get("attributes")?.split(","), search.get("excludedAttributes")?.split(","))
})

const SEARCH_REQUEST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

/** A `POST .../.search` body (RFC 7644 section 3.4.3): the list query and the projection, from JSON. */
const searchRequest = Effect.gen(function*() {
  const body = yield* readJson
  if (typeof body !== "object" || body === null || Array.isArray(body)) return yield* Effect.fail(badRequest("The body must be a SearchRequest object.", "invalidSyntax"))
  const record = body as Record<string, unknown>
  const schemas = record["schemas"]
  if (!Array.isArray(schemas) || !schemas.includes(SEARCH_REQUEST_SCHEMA)) {
    return yield* Effect.fail(badRequest(`schemas must be ["${SEARCH_REQUEST_SCHEMA}"].`, "invalidSyntax"))
  }
  const list = (name: string) => {
    const v = record[name]
    return v === undefined || v === null ? undefined : Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as Array<string>) : null
  }
  const attributes = list("attributes")
  const excluded = list("excludedAttributes")
  if (attributes === null || excluded === null) return yield* Effect.fail(badRequest("attributes and excludedAttributes are lists of names.", "invalidSyntax"))
  const int = (name: string, fallback: number, min: number) => {
    const v = record[name]
    if (v === undefined || v === null) return fallback
    return typeof v === "number" && Number.isInteger(v) ? Math.max(min, v) : null
  }
  const startIndex = int("startIndex", 1, 1)
  const count = int("count", 100, 0)
  if (startIndex === null || count === null) return yield* Effect.fail(badRequest("startIndex and count are integers.", "invalidValue"))
  const filter = record["filter"]
  if (filter !== undefined && typeof filter !== "string") return yield* Effect.fail(badRequest("filter must be a string.", "invalidFilter"))
  return { query: { filter, startIndex, count: Math.min(count, MAX_PAGE_SIZE) } satisfies ScimListQuery, shape: projection(attributes, excluded) }
})

const listResponse = (list: ScimList, shape: (r: Readonly<Record<string, unknown>>) => unknown) =>
  json({
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: list.totalResults,
    startIndex: list.startIndex,
    itemsPerPage: list.resources.length,
    Resources: list.resources.map(shape)
  })

/**
 * SCIM 2.0 (RFC 7643/7644) at /scim/v2: Users and Groups of the organisation whose SCIM token is presented, and the
 * discovery documents. Answers and errors are `application/scim+json`; failures use SCIM's error schema, not the
 * gateway's envelope (as the OpenID routes use OAuth's), because identity providers read those.
 */
export const ScimRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const directory = yield* ScimDirectory

  const route = <R>(
    method: "*" | "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: HttpRouter.PathInput,
    handler: (scope: ScimScope) => Effect.Effect<HttpServerResponse.HttpServerResponse, ScimFailure | ScimUnauthorized | ApiError | BadRequest, R>
  ) =>
    router.add(method, path, Effect.gen(function*() {
      const scope = yield* authenticate
      return yield* handler(scope)
    }).pipe(Effect.catch((failure) => Effect.succeed(failureResponse(failure)))))

  const param = Effect.map(HttpRouter.params, (p) => p["id"] ?? "")

  // Read-only documents: any other method is 405 (RFC 7644 section 4).
  const readOnly = (path: HttpRouter.PathInput) =>
    Effect.forEach(["POST", "PUT", "PATCH", "DELETE"] as const, (method) =>
      route(method, path, () => Effect.succeed(scimError(405, `${path} is read-only.`))), { discard: true })
  for (const path of ["/scim/v2/ServiceProviderConfig", "/scim/v2/ResourceTypes", "/scim/v2/ResourceTypes/:id", "/scim/v2/Schemas", "/scim/v2/Schemas/:id"] as const) {
    yield* readOnly(path)
  }
  yield* route("POST", "/scim/v2/.search", () =>
    Effect.succeed(scimError(501, "Searching several resource types at once is not supported: use /Users/.search or /Groups/.search.")))

  yield* route("GET", "/scim/v2/ServiceProviderConfig", (scope) => Effect.succeed(json(serviceProviderConfig(scope.baseUrl))))
  for (const [path, documents] of [["ResourceTypes", resourceTypeDocuments], ["Schemas", schemaDocuments]] as const) {
    yield* route("GET", `/scim/v2/${path}`, (scope) => {
      const all = documents(scope.baseUrl)
      return Effect.succeed(json({ schemas: [LIST_RESPONSE_SCHEMA], totalResults: all.length, startIndex: 1, itemsPerPage: all.length, Resources: all }))
    })
    yield* route("GET", `/scim/v2/${path}/:id`, (scope) =>
      Effect.gen(function*() {
        const id = yield* param
        const found = documents(scope.baseUrl).find((d) => d.id === id)
        return found === undefined ? scimError(404, `${path.slice(0, -1)} ${id.slice(0, 120)} not found.`) : json(found)
      }))
  }

  for (const [resourceType, ops] of [
    ["Users", { list: directory.listUsers, get: directory.getUser, create: directory.createUser, replace: directory.replaceUser, patch: directory.patchUser, remove: directory.deleteUser }],
    ["Groups", { list: directory.listGroups, get: directory.getGroup, create: directory.createGroup, replace: directory.replaceGroup, patch: directory.patchGroup, remove: directory.deleteGroup }]
  ] as const) {
    yield* route("GET", `/scim/v2/${resourceType}`, (scope) =>
      Effect.gen(function*() {
        const query = yield* listQuery
        const shape = yield* project
        return listResponse(yield* ops.list(scope, query), shape)
      }))
    yield* route("POST", `/scim/v2/${resourceType}/.search`, (scope) =>
      Effect.gen(function*() {
        const { query, shape } = yield* searchRequest
        return listResponse(yield* ops.list(scope, query), shape)
      }))
    yield* route("POST", `/scim/v2/${resourceType}`, (scope) =>
      Effect.gen(function*() {
        const created = yield* ops.create(scope, yield* readJson)
        return json(created, 201, (created["meta"] as { location: string }).location)
      }))
    yield* route("GET", `/scim/v2/${resourceType}/:id`, (scope) =>
      Effect.gen(function*() {
        const shape = yield* project
        return json(shape(yield* ops.get(scope, yield* param)))
      }))
    yield* route("PUT", `/scim/v2/${resourceType}/:id`, (scope) =>
      Effect.gen(function*() {
        const id = yield* param
        return json(yield* ops.replace(scope, id, yield* readJson))
      }))
    yield* route("PATCH", `/scim/v2/${resourceType}/:id`, (scope) =>
      Effect.gen(function*() {
        const id = yield* param
        return json(yield* ops.patch(scope, id, yield* readJson))
      }))
    yield* route("DELETE", `/scim/v2/${resourceType}/:id`, (scope) =>
      Effect.gen(function*() {
        yield* ops.remove(scope, yield* param)
        return HttpServerResponse.empty({ status: 204 })
      }))
  }

  // Anything else under /scim/v2 answers in SCIM's error schema too (after the token: nothing is told to strangers).
  yield* route("*", "/scim/v2/*", () => Effect.succeed(scimError(404, "No SCIM endpoint at this path.")))
}))
