import type { HttpServerRequest } from "effect/http"
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, type SessionCredentials } from "../../services/PortalSessions.ts"

/**
 * The portal-session credentials of a request (session cookie, CSRF cookie and header, method): the HTTP layer reads
 * them so that PortalSessions judges plain values and never sees a request.
 */
export const sessionCredentialsOf = (request: HttpServerRequest.HttpServerRequest): SessionCredentials => ({
  sessionCookie: request.cookies[SESSION_COOKIE],
  csrfCookie: request.cookies[CSRF_COOKIE],
  csrfHeader: request.headers[CSRF_HEADER],
  method: request.method
})
