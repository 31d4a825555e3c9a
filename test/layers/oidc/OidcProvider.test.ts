import { createServer } from "node:net"
import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOidcClient } from "../../../layers/oidc/clients.ts"
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

describe("OIDC provider with a real relying party (openid-client)", () => {
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
})
