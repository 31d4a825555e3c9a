import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { type GatewayPrincipal, Keys } from "../../services/Keys.ts"
import { PortalSessions } from "../../services/PortalSessions.ts"
import { type PortalPrincipal, PortalTokens } from "../../services/PortalTokens.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { DEMO_TIER } from "../../src/keys/demo.ts"
import type { Scope } from "../../src/keys/scopes.ts"
import { sessionCredentialsOf } from "./sessionCredentials.ts"

const bearerOf = (authorization: string | undefined) => {
  if (authorization === undefined) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  return m === null ? "" : m[1]
}

/**
 * Routes of gateway keys: a gateway key (`svc_...`) with the route's scope. A portal token is never valid here.
 * 401 `invalid_key` / `key_revoked` / `key_expired`, then 403 `demo_key_restricted` (a demo key on a route that does
 * not allow it), then 403 `insufficient_scope`.
 */
export const requireGatewayKey = (scope: Scope | undefined, options: { readonly demo?: "allowed" } = {}) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const bearer = bearerOf(request.headers["authorization"])
    if (bearer === undefined) {
      return yield* new ApiError({ status: 401, code: "invalid_key", message: "Missing Authorization: Bearer <API key>." })
    }
    if (bearer.startsWith("spt_")) {
      return yield* new ApiError({
        status: 401,
        code: "invalid_key",
        message: "Portal tokens are not accepted on relay routes; use a gateway key (svc_...)."
      })
    }
    const principal = yield* (yield* Keys).authenticate(bearer)
    const { access } = yield* RequestContext
    access.keyPrefix = principal.keyPrefix
    access.orgId = principal.orgId
    // Demo keys may relay (and list models) only: a route lets them in explicitly, so a new route refuses them.
    if (principal.tier === DEMO_TIER && options.demo !== "allowed") {
      return yield* new ApiError({
        status: 403,
        code: "demo_key_restricted",
        message: "Demo keys may only call the relay routes (chat completions, messages and their token counting, responses, embeddings) and list models."
      })
    }
    if (scope !== undefined) yield* checkScope(principal, scope)
    return principal
  })

export const checkScope = (principal: GatewayPrincipal, scope: Scope) => {
  const granted = principal.permissions ?? []
  if (granted.length === 0 || granted.includes(scope)) return Effect.void
  return Effect.fail(
    new ApiError({
      status: 403,
      code: "insufficient_scope",
      message: `This key lacks the "${scope}" scope.`,
      extra: { type: "permission_error", required: [scope], granted }
    })
  )
}

/**
 * Portal routes: a portal token (`spt_...`) or, without an Authorization header, a portal session cookie (writes
 * also need the CSRF header: 403 `csrf_failed`), holding `ability`. A gateway key is never valid here.
 * 401 `portal_auth_required`, 403 `insufficient_ability`.
 */
export const requirePortal = (ability: string | undefined) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const bearer = bearerOf(request.headers["authorization"])
    const sessions = bearer === undefined ? yield* Effect.serviceOption(PortalSessions) : Option.none()
    const session = Option.isSome(sessions) ? yield* sessions.value.fromCredentials(sessionCredentialsOf(request)) : undefined
    if (session === undefined && (bearer === undefined || bearer === "" || bearer.startsWith("svc_"))) {
      return yield* new ApiError({
        status: 401,
        code: "portal_auth_required",
        message: bearer?.startsWith("svc_")
          ? "Gateway keys are not accepted on portal routes; use a portal session or portal token (spt_...)."
          : "This route needs a portal session or portal token (spt_...)."
      })
    }
    const principal: PortalPrincipal = session ?? (yield* (yield* PortalTokens).authenticate(bearer!))
    const { access } = yield* RequestContext
    access.orgId = principal.orgId
    if (ability !== undefined && !principal.abilities.includes(ability) && !principal.abilities.includes("ability:admin")) {
      return yield* new ApiError({
        status: 403,
        code: "insufficient_ability",
        message: `This portal token lacks "${ability}".`,
        extra: { type: "permission_error", required: [ability], granted: principal.abilities }
      })
    }
    return principal
  })
