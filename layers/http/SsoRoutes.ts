import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { CSRF_COOKIE, SESSION_COOKIE } from "../../services/PortalSessions.ts"
import { SsoRejected, SsoSignIn, type SsoSession } from "../../services/SsoSignIn.ts"
import { ATTEMPT_TTL_MS } from "../sso/loginAttempts.ts"
import { isLoopbackHost } from "./PortalSessionRoutes.ts"

/** The browser's handle on a sign-in under way (the database keeps only its hash). */
export const SSO_COOKIE = "pr_sso"
const SSO_PATH = "/api/v1/portal/sso"

/**
 * Portal sign-in through the organisation's identity provider (docs/sso.md). `start` sends the browser to the IdP
 * with a `pr_sso` cookie; the IdP's answer (OIDC redirect) is accepted only with it. Success sets the same session
 * and CSRF cookies as the password sign-in and sends the browser to the portal; a refusal answers 401 `sso_rejected`.
 */
export const SsoRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const sso = yield* SsoSignIn

  yield* router.add("GET", "/api/v1/portal/sso/:org_id/start", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { org_id } = yield* HttpRouter.params
    const { redirectTo, attempt } = yield* sso.begin(org_id ?? "")
    const secure = !isLoopbackHost(request.headers["host"])
    return HttpServerResponse.redirect(redirectTo, { status: 302, headers: { "cache-control": "no-store" } }).pipe(
      // The SAML answer comes back as a cross-site POST: the cookie must travel on it (SameSite=None needs Secure).
      HttpServerResponse.setCookieUnsafe(SSO_COOKIE, attempt, {
        httpOnly: true,
        secure,
        sameSite: secure ? "none" : "lax",
        path: SSO_PATH,
        maxAge: `${ATTEMPT_TTL_MS / 1000} seconds`
      })
    )
  }))

  yield* router.add("GET", "/api/v1/portal/sso/:org_id/oidc/callback", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { org_id } = yield* HttpRouter.params
    const query = new URL(request.url, "http://x").searchParams
    const session = yield* sso.completeOidc({ orgId: org_id ?? "", attempt: request.cookies[SSO_COOKIE], callbackQuery: query })
    return signedIn(session, !isLoopbackHost(request.headers["host"]))
  }))

  yield* router.add("POST", "/api/v1/portal/sso/:org_id/saml/acs", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { org_id } = yield* HttpRouter.params
    const length = Number(request.headers["content-length"] ?? "0")
    if (length > MAX_SAML_FORM_BYTES) {
      return yield* new SsoRejected({ reason: "response_invalid", detail: "The SAML response form is larger than 512 KiB." })
    }
    const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
    const samlResponse = text.length > MAX_SAML_FORM_BYTES ? undefined : samlResponseOf(text)
    if (samlResponse === undefined || samlResponse === "") {
      return yield* new SsoRejected({ reason: "response_invalid", detail: "The form holds no SAMLResponse (HTTP-POST binding)." })
    }
    const session = yield* sso.completeSaml({ orgId: org_id ?? "", attempt: request.cookies[SSO_COOKIE], samlResponse })
    return signedIn(session, !isLoopbackHost(request.headers["host"]))
  }))

  yield* router.add("GET", "/api/v1/portal/sso/:org_id/saml/metadata", Effect.gen(function*() {
    const { org_id } = yield* HttpRouter.params
    const xml = yield* sso.samlMetadata(org_id ?? "")
    return HttpServerResponse.text(xml, { contentType: "application/samlmetadata+xml" })
  }))
}))

/** The largest SAMLResponse form accepted (a signed response with attributes is a few tens of kilobytes). */
const MAX_SAML_FORM_BYTES = 512 * 1024

/** The bytes of an `application/x-www-form-urlencoded` body -> its `SAMLResponse`, or undefined. */
const samlResponseOf = (body: string) => new URLSearchParams(body).get("SAMLResponse") ?? undefined

/** The portal session cookies (as POST /api/v1/portal/login sets them), then the portal. */
export const signedIn = (session: SsoSession, secure: boolean) => {
  const maxAge = `${Math.max(1, Math.floor((session.expiresAt.getTime() - Date.now()) / 1000))} seconds` as const
  return HttpServerResponse.redirect("/portal/", { status: 303, headers: { "cache-control": "no-store" } }).pipe(
    HttpServerResponse.setCookieUnsafe(SESSION_COOKIE, session.token, { httpOnly: true, secure, sameSite: "lax", path: "/", maxAge }),
    HttpServerResponse.setCookieUnsafe(CSRF_COOKIE, session.csrfToken, { httpOnly: false, secure, sameSite: "lax", path: "/", maxAge }),
    HttpServerResponse.expireCookieUnsafe(SSO_COOKIE, { path: SSO_PATH })
  )
}
