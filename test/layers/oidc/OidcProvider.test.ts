import { createServer } from "node:net"
import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createOidcClient } from "../../../layers/oidc/clients.ts"
import { protectLegacyRows } from "../../../layers/oidc/OidcAdapter.ts"
import { Accounts } from "../../../services/Accounts.ts"
import { KeyEncryption } from "../../../services/KeyEncryption.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
let issuer: string
let clientId: string
let clientSecret: string
let accountId: string
const REDIRECT = "http://127.0.0.1:65000/callback"
const EMAIL = "rp-user@example.org"
const PASSWORD = "oidc user password"

/** The issuer must be known before the gateway starts, so pick a free loopback port first. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

beforeAll(async () => {
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  gw = await startTestGateway({ PORT: String(port), PUBLIC_BASE_URL: issuer })
  const signUp = await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify({ email: EMAIL, password: PASSWORD }) })
  accountId = (await signUp.json()).account_id
  const created = await gw.runtime.runPromise(createOidcClient({ redirect_uri: REDIRECT, name: "test RP" }))
  clientId = created.client_id
  clientSecret = created.client_secret
})
afterAll(() => gw.close())

/** A tiny browser: follows redirects by hand (stopping at the RP's callback) and keeps cookies. */
const browser = () => {
  const jar = new Map<string, string>()
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";")
      const i = pair.indexOf("=")
      const name = pair.slice(0, i)
      const value = pair.slice(i + 1)
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(name)
      else jar.set(name, value)
    }
  }
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
  const go = async (url: string, init: RequestInit = {}): Promise<{ url: string; res: Response }> => {
    let current = url
    let options: RequestInit = init
    for (let hops = 0; hops < 10; hops++) {
      if (current.startsWith(REDIRECT)) return { url: current, res: new Response(null) }
      const res = await fetch(current, { ...options, redirect: "manual", headers: { ...(options.headers ?? {}), cookie: cookie() } })
      remember(res)
      const location = res.headers.get("location")
      if (res.status < 300 || res.status >= 400 || location === null) return { url: current, res }
      current = new URL(location, current).toString()
      options = {}
    }
    throw new Error("too many redirects")
  }
  return { go }
}

const discover = () => client.discovery(new URL(issuer), clientId, clientSecret, undefined, { execute: [client.allowInsecureRequests] })

/** Runs the authorization code + PKCE flow through the login form; returns the callback URL and the PKCE verifier. */
const authorize = async (config: client.Configuration, password = PASSWORD) => {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: "openid email offline_access",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    prompt: "consent"
  })
  const b = browser()
  const form = await b.go(url.toString())
  expect(form.res.status).toBe(200)
  const html = await form.res.text()
  expect(html).toContain('name="email"')
  expect(html).toContain('name="password"')
  const action = new URL(/action="([^"]+)"/.exec(html)![1].replaceAll("&amp;", "&"), form.url).toString()
  const done = await b.go(action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: EMAIL, password }).toString()
  })
  return { callback: done.url, res: done.res, verifier, state }
}

/** Opens the provider's login form for a fresh authorization; returns the browser and the form's action URL. */
const openLoginForm = async (config: client.Configuration) => {
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: "openid email",
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: "S256",
    state: client.randomState()
  })
  const b = browser()
  const form = await b.go(url.toString())
  expect(form.res.status).toBe(200)
  const html = await form.res.text()
  return { b, action: new URL(/action="([^"]+)"/.exec(html)![1].replaceAll("&amp;", "&"), form.url).toString() }
}

describe("OIDC provider with a real relying party (openid-client)", () => {
  it("limits login-form attempts in the portal sign-in's windows: 429 rate_limited with Retry-After, even for the right password", async () => {
    const email = "guessed@example.org"
    const password = "the right password"
    expect((await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify({ email, password }) })).status).toBe(201)
    const config = await discover()
    const { b, action } = await openLoginForm(config)
    const attempt = (pw: string, accept = "text/html") =>
      b.go(action, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept },
        body: new URLSearchParams({ email, password: pw }).toString()
      })
    // 10 attempts per address per 15 minutes, counted across both forms: 9 here and 1 at the portal.
    for (let i = 0; i < 9; i++) expect((await attempt(`wrong guess ${i}`)).res.status).toBe(401)
    const portal = await fetch(`${gw.url}/api/v1/portal/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "wrong guess 9" }) })
    expect(portal.status).toBe(401)

    const limited = await attempt(password)
    expect(limited.url).toBe(action) // no redirect: not signed in
    expect(limited.res.status).toBe(429)
    expect(Number(limited.res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    const page = await limited.res.text()
    expect(page).toContain('data-error-code="rate_limited"')
    expect(page).toContain("Too many sign-in attempts")
    expect(page).toContain(`action="${new URL(action).pathname}"`)

    const script = await attempt(password, "application/json")
    expect(script.res.status).toBe(429)
    expect(Number(script.res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect((await script.res.json()).error).toMatchObject({ code: "rate_limited", message: "Too many sign-in attempts; try again later." })

    // The portal refuses the same address too, with the same code.
    const portalLimited = await fetch(`${gw.url}/api/v1/portal/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) })
    expect(portalLimited.status).toBe(429)
    expect(portalLimited.headers.get("retry-after")).not.toBeNull()
    expect((await portalLimited.json()).error.code).toBe("rate_limited")
  })

  it("publishes discovery with the configured issuer and its own JWKS", async () => {
    const config = await discover()
    const meta = config.serverMetadata()
    expect(meta.issuer).toBe(issuer)
    expect(meta.authorization_endpoint).toBe(`${issuer}/oauth/authorize`)
    expect(meta.token_endpoint).toBe(`${issuer}/oauth/token`)
    expect(meta.userinfo_endpoint).toBe(`${issuer}/oauth/userinfo`)
    expect(meta.jwks_uri).toBe(`${issuer}/oauth/jwks`)
    expect(meta.code_challenge_methods_supported).toContain("S256")
    const jwks = await (await fetch(`${issuer}/oauth/jwks`)).json()
    expect(jwks.keys.length).toBeGreaterThan(0)
    for (const k of jwks.keys) expect(k.d).toBeUndefined()
    const receiptKeys = await fetch(`${issuer}/api/.well-known/service-receipt-pubkeys.jwks`)
    if (receiptKeys.status === 200) {
      const receiptKids = new Set(((await receiptKeys.json()).keys ?? []).map((k: any) => k.kid))
      for (const k of jwks.keys) expect(receiptKids.has(k.kid)).toBe(false)
    }
  })

  it("completes authorization code + PKCE, token exchange, userinfo and refresh", async () => {
    const config = await discover()
    const { callback, verifier, state } = await authorize(config)
    expect(callback.startsWith(REDIRECT)).toBe(true)
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state })
    const claims = tokens.claims()!
    expect(claims.iss).toBe(issuer)
    expect(claims.sub).toBe(accountId)
    expect(claims.aud).toBe(clientId)
    const info = await client.fetchUserInfo(config, tokens.access_token, accountId)
    expect(info).toMatchObject({ sub: accountId, email: EMAIL, email_verified: false })
    expect(typeof tokens.refresh_token).toBe("string")
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect((await client.fetchUserInfo(config, refreshed.access_token, accountId)).sub).toBe(accountId)
    // the code works once
    await expect(client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state })).rejects.toThrow()
  })

  it("refuses a wrong password on the login form", async () => {
    const config = await discover()
    const { callback, res } = await authorize(config, "wrong password!")
    expect(callback.startsWith(REDIRECT)).toBe(false)
    expect(res.status).toBe(401)
  })

  it("refuses a code exchange without the right PKCE verifier", async () => {
    const config = await discover()
    const { callback, state } = await authorize(config)
    await expect(
      client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: state })
    ).rejects.toThrow()
  })

  it("lets the relying party reject a tampered ID token", async () => {
    const config = await discover()
    client.enableNonRepudiationChecks(config)
    const { callback, verifier, state } = await authorize(config)
    // Swap the ID token's subject in transit, keeping the provider's signature.
    config[client.customFetch] = async (url, options) => {
      const res = await fetch(url, options as RequestInit)
      if (!url.endsWith("/oauth/token")) return res
      const body = await res.json()
      const [h, p, s] = body.id_token.split(".")
      const payload = JSON.parse(Buffer.from(p, "base64url").toString())
      payload.sub = "acct_attacker"
      body.id_token = [h, Buffer.from(JSON.stringify(payload)).toString("base64url"), s].join(".")
      return new Response(JSON.stringify(body), { status: res.status, headers: { "content-type": "application/json" } })
    }
    const failure = await client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state })
      .then(() => undefined, (e: any) => e)
    expect(failure?.code).toBe("OAUTH_INVALID_RESPONSE")
    expect(String(failure?.cause?.message ?? failure?.cause)).toMatch(/signature verification failed/i)
  })

  it("stores the provider's state in oidc_payloads", async () => {
    const models = await gw.query<{ model: string }>("SELECT DISTINCT model FROM oidc_payloads ORDER BY model")
    const names = models.map((m) => m.model)
    for (const m of ["Client", "Grant", "Session", "RefreshToken"]) expect(names).toContain(m)
  })

  it("keeps no usable credential at rest: ids hashed, payloads and the provider's keys sealed", async () => {
    const config = await discover()
    const { callback, verifier, state } = await authorize(config)
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state })
    const secrets = [clientSecret, tokens.access_token, tokens.refresh_token!, EMAIL]
    const dump = JSON.stringify(await gw.query("SELECT * FROM oidc_payloads"))
    for (const secret of secrets) expect(dump).not.toContain(secret)
    const rows = await gw.query<{ sealed: boolean; id: string; account_id: string | null }>(
      "SELECT payload ? 'sealed' AS sealed, id, account_id FROM oidc_payloads"
    )
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((r) => r.sealed && /^[0-9a-f]{64}$/.test(r.id))).toBe(true)
    expect(rows.some((r) => r.account_id === accountId)).toBe(true)
    const keys = await gw.query<{ sealed: boolean; text: string }>("SELECT private_jwk ? 'sealed' AS sealed, private_jwk::text AS text FROM oidc_signing_keys")
    expect(keys.length).toBeGreaterThanOrEqual(2)
    expect(keys.every((k) => k.sealed && !k.text.includes('"d"') && !k.text.includes('"k"'))).toBe(true)
    // and the refresh token still works from its sealed row
    expect((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toBeTypeOf("string")
  })

  it("rewrites rows stored before sealing (plain id and JSON) at start, and the client keeps working", async () => {
    const legacyId = `oc_legacy_${crypto.randomUUID().replaceAll("-", "")}`
    const legacySecret = `legacy-secret-${crypto.randomUUID()}`
    const metadata = {
      client_id: legacyId,
      client_secret: legacySecret,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic"
    }
    await gw.query("INSERT INTO oidc_payloads (model, id, payload) VALUES ('Client', $1, $2::jsonb)", legacyId, JSON.stringify(metadata))
    const moved = await gw.runtime.runPromise(
      Effect.gen(function*() {
        return yield* protectLegacyRows(yield* SqlClient.SqlClient, yield* KeyEncryption)
      }) as Effect.Effect<number, never, never>
    )
    expect(moved).toBe(1)
    expect(JSON.stringify(await gw.query("SELECT * FROM oidc_payloads"))).not.toContain(legacySecret)
    // A second pass finds nothing left to do.
    expect(await gw.runtime.runPromise(
      Effect.gen(function*() {
        return yield* protectLegacyRows(yield* SqlClient.SqlClient, yield* KeyEncryption)
      }) as Effect.Effect<number, never, never>
    )).toBe(0)
    // The legacy client authenticates at the token endpoint with its old secret (a wrong code, but the right client).
    const res = await fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${legacyId}:${legacySecret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "nope", redirect_uri: REDIRECT, code_verifier: "x".repeat(43) })
    })
    expect((await res.json()).error).toBe("invalid_grant")
    const wrong = await fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${legacyId}:not-the-secret`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "nope", redirect_uri: REDIRECT, code_verifier: "x".repeat(43) })
    })
    expect((await wrong.json()).error).toBe("invalid_client")
  })

  it("erasing the account removes its sealed OIDC rows (found by account_id) and its refresh tokens stop working", async () => {
    const config = await discover()
    const { callback, verifier, state } = await authorize(config)
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state })
    expect((await gw.query("SELECT 1 FROM oidc_payloads WHERE account_id = $1", accountId)).length).toBeGreaterThan(0)
    await gw.runtime.runPromise(
      Effect.flatMap(Effect.service(Accounts), (accounts) => accounts.erase({ actor: "test", accountId })) as Effect.Effect<unknown, never, never>
    )
    expect(await gw.query("SELECT 1 FROM oidc_payloads WHERE account_id = $1", accountId)).toHaveLength(0)
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toThrow()
  })
})
