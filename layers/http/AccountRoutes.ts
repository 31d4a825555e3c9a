import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Accounts, type Role, ROLES } from "../../services/Accounts.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { CSRF_COOKIE, PortalSessions, SESSION_COOKIE } from "../../services/PortalSessions.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { invalid, isPlausibleEmail, optionalString, rejectUnknownFields } from "../../src/http/validate.ts"
import { requirePortal } from "./auth.ts"
import { sessionCredentialsOf } from "./sessionCredentials.ts"
import { readDocumentedBody } from "./body.ts"
import { actorOf } from "./KeyRoutes.ts"
import { isPortalBuilt, portalRoot } from "./PortalRoutes.ts"
import { callerNetwork, limitOrFail } from "./rateLimit.ts"
import { apiRoute } from "./api/apiRoutes.ts"

const HOUR = 3_600_000
export const PASSWORD_MIN = 10
export const PASSWORD_MAX = 256

export const requiredEmail = (body: Record<string, unknown>) => {
  const email = optionalString(body, "email", 254)
  if (email instanceof ApiError) return email
  if (email === undefined || !isPlausibleEmail(email)) return invalid("email", `"email" must be an e-mail address.`)
  return email
}

export const passwordField = (body: Record<string, unknown>, required: boolean) => {
  const password = optionalString(body, "password", PASSWORD_MAX)
  if (password instanceof ApiError) return password
  if (password === undefined) return required ? invalid("password", `"password" is required.`) : undefined
  if ([...password].length < PASSWORD_MIN) return invalid("password", `"password" needs at least ${PASSWORD_MIN} characters.`)
  return password
}

const orFail = <A>(v: A | ApiError) => (v instanceof ApiError ? Effect.fail(v) : Effect.succeed(v))

/** Routes that need a signed-in person (not a script's portal token): the session cookie. */
const requireSession = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const session = yield* (yield* PortalSessions).fromCredentials(sessionCredentialsOf(request))
  if (session === undefined) {
    return yield* new ApiError({ status: 401, code: "portal_auth_required", message: "Sign in to the portal: this route needs a portal session." })
  }
  return session
})

/**
 * Accounts, e-mail verification, memberships and sub-organisations (docs/accounts.md).
 */
export const AccountRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const accounts = yield* Accounts
  const portalDir = portalRoot((yield* AppConfig).settings.portalDir)

  yield* router.add("POST", "/api/v1/accounts", Effect.gen(function*() {
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/accounts"))
    yield* orFail(rejectUnknownFields(body, ["email", "password", "organisation_name"]))
    const email = yield* orFail(requiredEmail(body))
    const password = (yield* orFail(passwordField(body, true)))!
    const organisationName = yield* orFail(optionalString(body, "organisation_name", 100))
    const network = yield* callerNetwork
    yield* limitOrFail([{ key: `signup:h:${network}`, windowMs: HOUR, limit: 10 }], "At most 10 sign-ups per hour per network.")
    const { accountId, orgId, verificationSent } = yield* accounts.signUp({ email, password, organisationName })
    return HttpServerResponse.jsonUnsafe(
      {
        account_id: accountId,
        org_id: orgId,
        email_verified: false,
        verification_email_sent: verificationSent,
        verification: verificationSent
          ? "A verification link has been sent to the e-mail address."
          : "The account is created, but the verification e-mail could not be sent (the mail server is unavailable). Ask for the link again later: POST /api/v1/account/verification."
      },
      { status: 201 }
    )
  }))

  yield* router.add("POST", "/api/v1/account/verification", Effect.gen(function*() {
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/account/verification"))
    yield* orFail(rejectUnknownFields(body, ["email"]))
    const email = yield* orFail(requiredEmail(body))
    const network = yield* callerNetwork
    yield* limitOrFail(
      [{ key: `verify-mail:n:${network}`, windowMs: HOUR, limit: 10 }, { key: `verify-mail:e:${email.toLowerCase()}`, windowMs: HOUR, limit: 3 }],
      "Too many verification e-mails requested; try again later."
    )
    yield* accounts.requestVerification(email)
    // Same answer whether or not the address has an unverified account: no account enumeration.
    return HttpServerResponse.jsonUnsafe({ status: "sent_if_unverified" }, { status: 202 })
  }))

  const verified = (r: { accountId: string; orgId: string; trialCredited: boolean }) =>
    HttpServerResponse.jsonUnsafe({
      verified: true,
      account_id: r.accountId,
      org_id: r.orgId,
      trial_credited: r.trialCredited,
      trial_credit_micros: r.trialCredited ? 2_000_000 : 0
    }, { headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" } })

  yield* router.add("GET", "/api/v1/account/verify", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = new URL(request.url, "http://x").searchParams.get("token")
    if (token === null || token === "" || token.length > 100) return yield* invalid("token", "The link has no valid token.")
    // A person opening the mail's link in a browser gets the portal's page, which verifies with a POST: the link
    // works once, so a mail scanner that only fetches it must not use it up, and a JSON answer means nothing to a person.
    if ((request.headers["accept"] ?? "").includes("text/html") && (yield* isPortalBuilt(portalDir))) {
      return HttpServerResponse.redirect(`/portal/verify?token=${encodeURIComponent(token)}`, {
        status: 303,
        headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
      })
    }
    return verified(yield* accounts.verify(token))
  }))

  // The same link's token, posted with a password: how users added by e-mail (or created by self-service) set one.
  yield* router.add("POST", "/api/v1/account/verify", Effect.gen(function*() {
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/account/verify"))
    yield* orFail(rejectUnknownFields(body, ["token", "password"]))
    const token = yield* orFail(optionalString(body, "token", 100))
    if (token === undefined || token === "") return yield* invalid("token", `"token" is required.`)
    const password = yield* orFail(passwordField(body, false))
    return verified(yield* accounts.verify(token, password))
  }))

  yield* router.add("GET", "/api/v1/account", Effect.gen(function*() {
    const session = yield* requireSession
    const view = yield* accounts.get(session.accountId)
    return HttpServerResponse.jsonUnsafe({
      account_id: view.accountId,
      email: view.email,
      email_verified: view.emailVerified,
      home_org_id: view.homeOrgId,
      org_id: session.orgId,
      role: session.role,
      abilities: session.abilities,
      memberships: view.memberships.map((m) => ({ org_id: m.orgId, role: m.role }))
    }, { headers: { "cache-control": "no-store" } })
  }))

  yield* router.add("DELETE", "/api/v1/account", Effect.gen(function*() {
    const session = yield* requireSession
    yield* accounts.erase({ actor: `account:${session.accountId}`, accountId: session.accountId })
    return HttpServerResponse.empty({ status: 204 }).pipe(
      HttpServerResponse.expireCookieUnsafe(SESSION_COOKIE, { path: "/" }),
      HttpServerResponse.expireCookieUnsafe(CSRF_COOKIE, { path: "/" })
    )
  }))

  // The operator erases a user on request (e.g. a data-protection request received by e-mail).
  yield* router.add("DELETE", "/api/v1/accounts/:id", Effect.gen(function*() {
    const admin = yield* requirePortal("ability:admin")
    const { id } = yield* HttpRouter.params
    yield* accounts.erase({ actor: actorOf(admin).id, accountId: id! })
    return HttpServerResponse.empty({ status: 204 })
  }))

  yield* router.add("POST", "/api/v1/orgs", Effect.gen(function*() {
    const principal = yield* requirePortal("abilities:write")
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/orgs"))
    yield* orFail(rejectUnknownFields(body, ["name"]))
    const name = yield* orFail(optionalString(body, "name", 100))
    if (name === undefined || name.trim() === "") return yield* invalid("name", `"name" is required.`)
    const { orgId } = yield* accounts.createSubOrganisation({ actor: actorOf(principal).id, parentOrgId: principal.orgId, name })
    return HttpServerResponse.jsonUnsafe({ org_id: orgId, parent_id: principal.orgId, name }, { status: 201 })
  }))

  yield* router.add("POST", "/api/v1/orgs/:id/members", Effect.gen(function*() {
    const principal = yield* requirePortal("abilities:write")
    const { id } = yield* HttpRouter.params
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/orgs/:id/members"))
    yield* orFail(rejectUnknownFields(body, ["email", "role"]))
    const email = yield* orFail(requiredEmail(body))
    const role = body.role ?? "member"
    if (typeof role !== "string" || !(ROLES as ReadonlyArray<string>).includes(role)) {
      return yield* invalid("role", `"role" is one of ${ROLES.join(", ")}.`)
    }
    const result = yield* accounts.addMember({ actor: actorOf(principal).id, actorOrgId: principal.orgId, orgId: id!, email, role: role as Role })
    return HttpServerResponse.jsonUnsafe({
      account_id: result.accountId,
      org_id: id,
      role,
      created: result.created,
      verification_email_sent: result.verificationSent,
      ...(result.created && !result.verificationSent
        ? { verification: "The invitation e-mail could not be sent (the mail server is unavailable). Ask for the link again with POST /api/v1/account/verification once mail works." }
        : {})
    }, { status: 201 })
  }))
}))
