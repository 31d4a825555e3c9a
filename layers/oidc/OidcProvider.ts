import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import Provider, { type Configuration } from "oidc-provider"
import { AppConfig } from "../../services/AppConfig.ts"
import { RateWindows } from "../../services/RateWindows.ts"
import { errorEnvelope } from "../../src/http/ApiError.ts"
import { clientAddress, networkOf } from "../../src/http/clientNetwork.ts"
import { limitVerdict, SIGN_IN_LIMITED, signInWindows } from "../http/rateLimit.ts"
import { DUMMY_PASSWORD_HASH, verifyPassword } from "../pg/passwordHash.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"
import { jsonColumn } from "../pg/jsonColumn.ts"
import { isSealed, keyContext, openJson, sealJson } from "./atRest.ts"
import { makeOidcAdapter, protectLegacyRows, protectedRow } from "./OidcAdapter.ts"
import { renderLoginForm } from "./loginForm.ts"

/** The Node request handler of the OpenID Connect provider (oidc-provider, a Koa app) plus its login interactions. */
export class OidcProvider extends Context.Service<OidcProvider, {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>
  /** Stores a client's metadata (its secret included) the way the provider stores everything: sealed at rest. */
  readonly registerClient: (metadata: { readonly client_id: string } & Record<string, unknown>) => Effect.Effect<void>
}>()("privacy-relay/OidcProvider") {}

export const OIDC_PATHS = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  jwks: "/oauth/jwks",
  userinfo: "/oauth/userinfo",
  end_session: "/oauth/session/end",
  revocation: "/oauth/token/revocation",
  introspection: "/oauth/token/introspection",
  pushed_authorization_request: "/oauth/par",
  backchannel_authentication: "/oauth/backchannel",
  code_verification: "/oauth/device",
  device_authorization: "/oauth/device/auth",
  registration: "/oauth/reg",
  challenge: "/oauth/challenge"
} as const
const INTERACTION_PREFIX = "/oauth/interaction/"

/**
 * The provider's own keys, distinct from the receipt keys: an RSA signing key (RS256, the OIDC default) and a
 * cookie-signing secret, created by the first gateway to start and shared through the database by every node, sealed
 * under the KEK at rest (rows from before sealing are sealed on the next start).
 */
const loadKeys = (sql: SqlClient.SqlClient, keys: KeyEncryption["Service"]) =>
  Effect.gen(function*() {
    const read = sql<{ kid: string; private_jwk: unknown }>`SELECT kid, private_jwk FROM oidc_signing_keys ORDER BY created_at, kid`
    let rows = yield* read
    for (const row of rows) {
      const stored = jsonColumn<unknown>(row.private_jwk)
      if (isSealed(stored)) continue
      const sealed = yield* sealJson(keys, keyContext(row.kid), stored)
      yield* sql`UPDATE oidc_signing_keys SET private_jwk = ${JSON.stringify(sealed)}::jsonb WHERE kid = ${row.kid} AND NOT (private_jwk ? 'sealed')`
    }
    if (!rows.some((r) => r.kid.startsWith("sig-"))) {
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
      const jwk = { ...privateKey.export({ format: "jwk" }), kid: `sig-${randomBytes(8).toString("hex")}`, alg: "RS256", use: "sig" }
      const sealed = yield* sealJson(keys, keyContext(jwk.kid), jwk)
      yield* sql`INSERT INTO oidc_signing_keys ${sql.insert({ kid: jwk.kid, private_jwk: JSON.stringify(sealed) })} ON CONFLICT DO NOTHING`
    }
    if (!rows.some((r) => r.kid.startsWith("cookie-"))) {
      const kid = `cookie-${randomBytes(8).toString("hex")}`
      const sealed = yield* sealJson(keys, keyContext(kid), { k: randomBytes(32).toString("base64url") })
      yield* sql`INSERT INTO oidc_signing_keys ${sql.insert({ kid, private_jwk: JSON.stringify(sealed) })}`
    }
    rows = yield* read
    const open = <A>(row: { kid: string; private_jwk: unknown }) => openJson<A>(keys, keyContext(row.kid), row.private_jwk)
    // Two nodes racing at first start may both insert: the oldest key of each kind wins everywhere.
    return {
      signing: yield* open<Record<string, unknown>>(rows.find((r) => r.kid.startsWith("sig-"))!),
      cookieSecret: (yield* open<{ k: string }>(rows.find((r) => r.kid.startsWith("cookie-"))!)).k
    }
  })

const readForm = (req: IncomingMessage) =>
  new Promise<URLSearchParams>((resolve, reject) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => {
      body += chunk
      if (body.length > 16_384) req.destroy(new Error("form too large"))
    })
    req.on("end", () => resolve(new URLSearchParams(body)))
    req.on("error", reject)
  })

/** A script (Accept: application/json before text/html) gets the gateway's JSON error body instead of the page. */
const prefersJson = (req: IncomingMessage) => {
  const accept = req.headers["accept"] ?? ""
  const json = accept.indexOf("application/json")
  const html = accept.indexOf("text/html")
  return json !== -1 && (html === -1 || json < html)
}

export const OidcProviderLive = Layer.effect(
  OidcProvider,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const context = yield* Effect.context<SqlClient.SqlClient | RateWindows>()
    const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | RateWindows>) => Effect.runPromiseWith(context)(effect)
    const encryption = yield* KeyEncryption
    const keys = yield* loadKeys(sql, encryption).pipe(Effect.orDie)
    const protectedNow = yield* protectLegacyRows(sql, encryption).pipe(Effect.orDie)
    if (protectedNow > 0) yield* Effect.logInfo("sealed OpenID provider rows stored before sealing").pipe(Effect.annotateLogs({ rows: protectedNow }))

    const findAccount = async (_ctx: unknown, sub: string) => {
      const rows = await run(sql<{ id: string; email: string | null; email_verified: boolean }>`
        SELECT id, email, email_verified FROM accounts WHERE id = ${sub} AND deleted_at IS NULL`)
      const account = rows[0]
      if (account === undefined) return undefined
      return {
        accountId: account.id,
        claims: async () => ({ sub: account.id, email: account.email ?? undefined, email_verified: account.email_verified })
      }
    }

    const configuration: Configuration = {
      adapter: makeOidcAdapter(sql, encryption, run),
      findAccount,
      jwks: { keys: [keys.signing] },
      cookies: { keys: [keys.cookieSecret] },
      routes: OIDC_PATHS,
      scopes: ["openid", "email", "offline_access"],
      claims: { openid: ["sub"], email: ["email", "email_verified"] },
      features: {
        devInteractions: { enabled: false },
        revocation: { enabled: true },
        userinfo: { enabled: true }
      },
      // PKCE (S256) for every client, confidential ones included.
      pkce: { required: () => true },
      // Every client registered here may hold refresh tokens for its users (no `offline_access` dance needed).
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
      interactions: { url: (_ctx, interaction) => `${INTERACTION_PREFIX}${interaction.uid}` },
      ttl: {
        AccessToken: 3600,
        AuthorizationCode: 60,
        IdToken: 3600,
        Interaction: 600,
        Session: 14 * 86_400,
        Grant: 14 * 86_400,
        RefreshToken: 14 * 86_400
      },
      renderError: async (ctx, out) => {
        ctx.type = "json"
        ctx.body = { error: out.error, error_description: out.error_description }
      }
    }
    const provider = new Provider(config.publicBaseUrl, configuration)
    // Behind a TLS-terminating proxy the issuer's scheme is https while the socket is plain http.
    provider.proxy = config.trustedProxies.length > 0
    const callback = provider.callback()

    /** The login step of an authorization: our own form, checked against the account's scrypt password. */
    const interaction = async (req: IncomingMessage, res: ServerResponse) => {
      const details = await provider.interactionDetails(req, res)
      const { prompt, params, uid } = details
      if (prompt.name === "login") {
        if (req.method === "GET") {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "x-frame-options": "DENY" })
          res.end(renderLoginForm({ action: `${INTERACTION_PREFIX}${uid}`, clientId: String(params.client_id ?? "") }))
          return
        }
        const form = await readForm(req)
        const email = form.get("email") ?? ""
        const password = form.get("password") ?? ""
        // The portal's sign-in limits, in the same windows: this form must not be a way around them.
        const forwarded = req.headers["x-forwarded-for"]
        const network = networkOf(clientAddress(req.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(",") : forwarded, config.trustedProxies))
        const refused = await run(limitVerdict(signInWindows(network, email), SIGN_IN_LIMITED))
        if (refused !== undefined) {
          const headers = { "cache-control": "no-store", "x-frame-options": "DENY", ...refused.headers }
          if (prefersJson(req)) {
            res.writeHead(refused.status, { ...headers, "content-type": "application/json" })
            res.end(JSON.stringify(errorEnvelope(refused.code, refused.message)))
          } else {
            res.writeHead(refused.status, { ...headers, "content-type": "text/html; charset=utf-8" })
            res.end(renderLoginForm({ action: `${INTERACTION_PREFIX}${uid}`, clientId: String(params.client_id ?? ""), error: refused.message, code: refused.code }))
          }
          return
        }
        const rows = await run(sql<{ id: string; password_hash: string | null }>`
          SELECT id, password_hash FROM accounts WHERE lower(email) = lower(${email}) AND deleted_at IS NULL`)
        const ok = await verifyPassword(password, rows[0]?.password_hash ?? DUMMY_PASSWORD_HASH)
        if (rows[0] === undefined || rows[0].password_hash === null || !ok) {
          res.writeHead(401, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "x-frame-options": "DENY" })
          res.end(renderLoginForm({ action: `${INTERACTION_PREFIX}${uid}`, clientId: String(params.client_id ?? ""), error: "Wrong e-mail address or password." }))
          return
        }
        await provider.interactionFinished(req, res, { login: { accountId: rows[0].id } }, { mergeWithLastSubmission: false })
        return
      }
      // Consent: clients are registered by the operator (first party), so the requested scopes are granted.
      const grant = details.grantId ? (await provider.Grant.find(details.grantId))! : new provider.Grant({ accountId: details.session!.accountId, clientId: String(params.client_id) })
      const missing = (details.prompt.details as any)
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
      if (missing.missingResourceScopes) for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) grant.addResourceScope(indicator, (scopes as Array<string>).join(" "))
      const grantId = await grant.save()
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
    }

    return OidcProvider.of({
      registerClient: (metadata) =>
        Effect.gen(function*() {
          const row = yield* protectedRow(encryption, "Client", metadata.client_id, metadata, null)
          yield* sql`INSERT INTO oidc_payloads ${sql.insert(row)}`
        }).pipe(Effect.orDie),
      handle: async (req, res) => {
        try {
          if ((req.url ?? "").startsWith(INTERACTION_PREFIX)) await interaction(req, res)
          else await callback(req, res)
        } catch (error) {
          if (!res.headersSent) {
            const name = (error as { name?: string }).name
            const status = name === "SessionNotFound" ? 400 : 500
            res.writeHead(status, { "content-type": "application/json" })
            res.end(JSON.stringify({ error: status === 400 ? "invalid_request" : "server_error", error_description: status === 400 ? "The sign-in session has expired; start again." : "Internal error." }))
          } else if (!res.writableEnded) res.end()
        }
      }
    })
  })
)
