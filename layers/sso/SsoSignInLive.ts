import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as client from "openid-client"
import { AppConfig } from "../../services/AppConfig.ts"
import { Outbox } from "../../services/Outbox.ts"
import { PortalSessions } from "../../services/PortalSessions.ts"
import { type OidcConnection, SsoConnections, SsoNotConfigured } from "../../services/SsoConnections.ts"
import { SsoRejected, SsoSignIn } from "../../services/SsoSignIn.ts"
import { joinJustInTime, type VouchedPerson } from "./joinJustInTime.ts"
import { saveAttempt, takeAttempt } from "./loginAttempts.ts"
import { classifyOidcError, makeOidcConfigurations, oidcRedirectUri } from "./oidcRelyingParty.ts"
import { classifySamlError, samlAuthorizeUrl, samlSpMetadata, validateSamlResponse } from "./samlServiceProvider.ts"

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/

/** The person's address, when it is one and its domain is one the organisation allows. */
export const checkEmail = (email: unknown, allowedDomains: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (typeof email !== "string" || !EMAIL.test(email)) {
      return yield* new SsoRejected({ reason: "email_missing", detail: "The identity provider did not give an e-mail address for this person." })
    }
    const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase()
    if (!allowedDomains.includes(domain)) {
      return yield* new SsoRejected({ reason: "domain_not_allowed", detail: `E-mail addresses at ${domain.slice(0, 100)} may not sign in to this organisation.` })
    }
    return email
  })

export const SsoSignInLive = Layer.effect(
  SsoSignIn,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const connections = yield* SsoConnections
    const sessions = yield* PortalSessions
    const outbox = yield* Outbox
    const { publicBaseUrl } = yield* AppConfig
    const configurations = makeOidcConfigurations()

    const oidcConfiguration = (c: OidcConnection) =>
      Effect.tryPromise({
        try: () =>
          configurations({
            key: `${c.orgId}|${c.updatedAt.getTime()}`,
            issuer: c.issuer,
            clientId: c.clientId,
            clientSecret: () => Effect.runPromise(Effect.map(connections.oidcClientSecret(c.orgId), Redacted.value))
          }),
        catch: (e) => new SsoRejected({ reason: "idp_error", detail: `The identity provider's discovery document could not be read (${String((e as Error)?.message ?? e).slice(0, 200)}).` })
      })

    /** A person the IdP vouched for -> the account (just in time) -> a portal session in the organisation. */
    const signIn = (orgId: string, person: VouchedPerson, jitRole: OidcConnection["jitRole"]) =>
      Effect.gen(function*() {
        const { accountId, created } = yield* joinJustInTime(sql, outbox, { orgId, person, jitRole })
        // The account was just made a member (or is one): a refusal here would be a bug, not an answer.
        const session = yield* sessions.open({ accountId, orgId }).pipe(Effect.orDie)
        return { ...session, accountCreated: created }
      })

    /** A refusal is logged for the operator (organisation and reason: never a token, an assertion or an address). */
    const logRefusal = (orgId: string, protocol: "oidc" | "saml") => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.tapError(effect, (e) =>
        e instanceof SsoRejected
          ? Effect.logWarning("sso sign-in refused").pipe(Effect.annotateLogs({ org_id: orgId, protocol, reason: e.reason }))
          : Effect.void)

    return SsoSignIn.of({
      begin: (orgId) =>
        Effect.gen(function*() {
          const connection = yield* connections.get(orgId)
          if (connection.protocol === "saml") {
            const { url, requestId } = yield* Effect.promise(() => samlAuthorizeUrl(publicBaseUrl, connection))
            const attempt = yield* saveAttempt(sql, { org_id: orgId, protocol: "saml", request_id: requestId })
            return { redirectTo: url, attempt }
          }
          const config = yield* oidcConfiguration(connection).pipe(Effect.orDie)
          const codeVerifier = client.randomPKCECodeVerifier()
          const state = client.randomState()
          const nonce = client.randomNonce()
          const redirectTo = client.buildAuthorizationUrl(config, {
            redirect_uri: oidcRedirectUri(publicBaseUrl, orgId),
            scope: "openid email",
            code_challenge: yield* Effect.promise(() => client.calculatePKCECodeChallenge(codeVerifier)),
            code_challenge_method: "S256",
            state,
            nonce
          }).toString()
          const attempt = yield* saveAttempt(sql, { org_id: orgId, protocol: "oidc", state, nonce, code_verifier: codeVerifier })
          return { redirectTo, attempt }
        }),

      completeOidc: ({ orgId, attempt, callbackQuery }) =>
        Effect.gen(function*() {
          const started = yield* takeAttempt(sql, { attempt, orgId, protocol: "oidc" })
          if (started === undefined) {
            return yield* new SsoRejected({ reason: "attempt_unknown", detail: "No sign-in was started in this browser, or it took longer than 10 minutes, or it was finished already: start again." })
          }
          const connection = yield* connections.get(orgId)
          if (connection.protocol !== "oidc") {
            return yield* new SsoRejected({ reason: "attempt_unknown", detail: "The organisation's identity provider changed during the sign-in: start again." })
          }
          const config = yield* oidcConfiguration(connection)
          const currentUrl = new URL(oidcRedirectUri(publicBaseUrl, orgId))
          currentUrl.search = callbackQuery.toString()
          const tokens = yield* Effect.tryPromise({
            try: () =>
              client.authorizationCodeGrant(config, currentUrl, {
                pkceCodeVerifier: started.code_verifier!,
                expectedState: started.state!,
                expectedNonce: started.nonce!,
                idTokenExpected: true
              }),
            catch: classifyOidcError
          })
          const claims = tokens.claims()!
          // Some IdPs put the e-mail address only in the UserInfo answer (the gateway's own provider does).
          const profile = claims.email === undefined
            ? yield* Effect.tryPromise({ try: () => client.fetchUserInfo(config, tokens.access_token, claims.sub), catch: classifyOidcError })
            : claims
          if (profile.email_verified === false) {
            return yield* new SsoRejected({ reason: "email_not_verified", detail: "The identity provider says this person's e-mail address is not verified." })
          }
          const email = yield* checkEmail(profile.email, connection.allowedDomains)
          return yield* signIn(orgId, { protocol: "oidc", subject: `oidc:${connection.issuer}#${claims.sub}`, email }, connection.jitRole)
        }).pipe(logRefusal(orgId, "oidc")),

      completeSaml: ({ orgId, attempt, samlResponse }) =>
        Effect.gen(function*() {
          const started = yield* takeAttempt(sql, { attempt, orgId, protocol: "saml" })
          if (started === undefined || started.request_id === null) {
            return yield* new SsoRejected({ reason: "attempt_unknown", detail: "No sign-in was started in this browser, or it took longer than 10 minutes, or it was finished already (a response is accepted once): start again." })
          }
          const connection = yield* connections.get(orgId)
          if (connection.protocol !== "saml") {
            return yield* new SsoRejected({ reason: "attempt_unknown", detail: "The organisation's identity provider changed during the sign-in: start again." })
          }
          const person = yield* Effect.tryPromise({
            try: () => validateSamlResponse(publicBaseUrl, connection, started.request_id!, samlResponse),
            catch: classifySamlError
          })
          const email = yield* checkEmail(person.email, connection.allowedDomains)
          return yield* signIn(orgId, { protocol: "saml", subject: `saml:${connection.entityId}#${person.nameId}`, email }, connection.jitRole)
        }).pipe(logRefusal(orgId, "saml")),

      samlMetadata: (orgId) =>
        Effect.gen(function*() {
          const connection = yield* connections.get(orgId)
          if (connection.protocol !== "saml") return yield* new SsoNotConfigured({ orgId })
          return samlSpMetadata(publicBaseUrl, connection)
        })
    })
  })
)
