import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { CSRF_COOKIE, PortalSessions, SESSION_COOKIE } from "../../services/PortalSessions.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { invalid, optionalString, rejectUnknownFields } from "../../src/http/validate.ts"
import { readDocumentedBody } from "./body.ts"
import { requiredEmail } from "./AccountRoutes.ts"
import { sessionCredentialsOf } from "./sessionCredentials.ts"
import { callerNetwork, limitOrFail, SIGN_IN_LIMITED, signInWindows } from "./rateLimit.ts"
import { apiRoute } from "./api/apiRoutes.ts"

/** `Secure` everywhere except plain-http development on the loopback host. */
export const isLoopbackHost = (host: string | undefined) => {
  const name = (host ?? "").replace(/:\d+$/, "").toLowerCase()
  return name === "localhost" || name === "127.0.0.1" || name === "[::1]"
}

/**
 * Portal sign-in and sign-out. The session cookie is HttpOnly; the CSRF cookie is readable by the portal's script,
 * which echoes it in `X-CSRF-Token` on every write (double submit, bound to the session).
 */
export const PortalSessionRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const sessions = yield* PortalSessions

  yield* router.add("POST", "/api/v1/portal/login", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/portal/login"))
    const unknownField = rejectUnknownFields(body, ["email", "password", "org_id"])
    if (unknownField) return yield* unknownField
    const email = requiredEmail(body)
    if (email instanceof ApiError) return yield* email
    const password = optionalString(body, "password", 256)
    if (password instanceof ApiError) return yield* password
    if (password === undefined || password === "") return yield* invalid("password", `"password" is required.`)
    const orgId = optionalString(body, "org_id", 100)
    if (orgId instanceof ApiError) return yield* orgId
    const network = yield* callerNetwork
    yield* limitOrFail(signInWindows(network, email), SIGN_IN_LIMITED)
    const session = yield* sessions.login({ email, password, orgId })
    const secure = !isLoopbackHost(request.headers["host"])
    const maxAge = Math.max(1, Math.floor((session.expiresAt.getTime() - Date.now()) / 1000))
    return HttpServerResponse.jsonUnsafe(
      {
        account_id: session.principal.accountId,
        org_id: session.principal.orgId,
        role: session.principal.role,
        abilities: session.principal.abilities,
        csrf_token: session.csrfToken,
        expires_at: session.expiresAt.toISOString()
      },
      { headers: { "cache-control": "no-store" } }
    ).pipe(
      HttpServerResponse.setCookieUnsafe(SESSION_COOKIE, session.token, { httpOnly: true, secure, sameSite: "lax", path: "/", maxAge: `${maxAge} seconds` }),
      HttpServerResponse.setCookieUnsafe(CSRF_COOKIE, session.csrfToken, { httpOnly: false, secure, sameSite: "lax", path: "/", maxAge: `${maxAge} seconds` })
    )
  }))

  yield* router.add("POST", "/api/v1/portal/logout", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // Signing out is a write: it needs the CSRF header like any other (fromCredentials checks it).
    const session = yield* sessions.fromCredentials(sessionCredentialsOf(request))
    if (session !== undefined) yield* sessions.logout(request.cookies[SESSION_COOKIE]!)
    return HttpServerResponse.empty({ status: 204 }).pipe(
      HttpServerResponse.expireCookieUnsafe(SESSION_COOKIE, { path: "/" }),
      HttpServerResponse.expireCookieUnsafe(CSRF_COOKIE, { path: "/" })
    )
  }))
}))
