import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOidcClient } from "../../../layers/oidc/clients.ts"
import { createOrg, setOidcIdp } from "../../../layers/AdminOperations.ts"
import { browser } from "../../support/browser.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { type IdTokenFault, startHostileOidcProvider } from "../../support/hostileOidcProvider.ts"
import { freePort } from "../../support/nginxProxy.ts"

/**
 * OpenID Connect sign-in to the portal (docs/sso.md) against a real OpenID provider: a second gateway, whose embedded
 * provider (oidc-provider) signs its own accounts in. The refusals a real provider will not produce (an ID token
 * from another issuer, for another audience, expired, with the wrong nonce or a foreign signature) come from a
 * small provider whose token endpoint gets one thing wrong; each answers 401 `sso_rejected` and creates nothing.
 */
let idp: TestGateway
let sp: TestGateway
let orgId: string
const PASSWORD = "idp user password"

const signUpAtIdp = async (email: string) => {
  const res = await fetch(`${idp.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify({ email, password: PASSWORD }) })
  expect(res.status).toBe(201)
  await idp.query("UPDATE accounts SET email_verified = true WHERE lower(email) = lower($1)", email)
}

beforeAll(async () => {
  const [idpPort, spPort] = [await freePort(), await freePort()]
  idp = await startTestGateway({ PORT: String(idpPort), PUBLIC_BASE_URL: `http://127.0.0.1:${idpPort}` })
  sp = await startTestGateway({ PORT: String(spPort), PUBLIC_BASE_URL: `http://127.0.0.1:${spPort}` })
  ;({ org_id: orgId } = await sp.runtime.runPromise(createOrg({ name: "acme" })))
  const registered = await idp.runtime.runPromise(createOidcClient({ redirect_uri: `${sp.url}/api/v1/portal/sso/${orgId}/oidc/callback`, name: "gateway SP" }))
  await sp.runtime.runPromise(setOidcIdp({
    org_id: orgId,
    issuer: idp.env.PUBLIC_BASE_URL,
    client_id: registered.client_id,
    client_secret: registered.client_secret,
    allowed_domains: "example.com",
    jit_role: "admin"
  }, "test"))
  await signUpAtIdp("alice@example.com")
  await signUpAtIdp("eve@elsewhere.test")
}, 180_000)
afterAll(async () => {
  await sp?.close()
  await idp?.close()
})

/** Start at the gateway, sign in at the IdP's form, stop before the portal page. */
const signInThroughIdp = async (email: string) => {
  const b = browser()
  const atPortal = (url: string) => new URL(url).pathname === "/portal/"
  const form = await b.go(`${sp.url}/api/v1/portal/sso/${orgId}/start`)
  expect(form.hops[1]).toMatch(new RegExp(`^${idp.url}/oauth/authorize\\?`))
  const authorize = new URL(form.hops[1]!).searchParams
  expect(authorize.get("code_challenge_method")).toBe("S256")
  expect(authorize.get("nonce")).toMatch(/\S{20,}/)
  expect(authorize.get("state")).toMatch(/\S{20,}/)
  const html = await form.res.text()
  const action = new URL(/action="([^"]+)"/.exec(html)![1]!.replaceAll("&amp;", "&"), form.url).toString()
  const done = await b.go(action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email, password: PASSWORD }).toString(),
    stopAt: atPortal
  })
  return { b, done, callback: done.hops.find((h) => h.includes("/oidc/callback"))! }
}

const count = async (table: string) => Number((await sp.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n)

describe("OIDC sign-in against a real OpenID provider (the gateway's own, in a second gateway)", () => {
  it("authorization code + PKCE: the person joins just in time with the configured role and gets a portal session", async () => {
    const { b, done } = await signInThroughIdp("alice@example.com")
    expect(new URL(done.url).pathname).toBe("/portal/")
    expect(b.jar.has("pr_session")).toBe(true)
    expect(b.jar.has("pr_csrf")).toBe(true)
    expect(b.jar.has("pr_sso")).toBe(false)
    const me = await fetch(`${sp.url}/api/v1/account`, { headers: { cookie: b.cookie() } })
    expect(me.status).toBe(200)
    const account = await me.json()
    expect(account).toMatchObject({ email: "alice@example.com", email_verified: true, home_org_id: orgId, org_id: orgId, role: "admin", memberships: [{ org_id: orgId, role: "admin" }] })
    const audit = await sp.query<{ action: string; actor: string; target: string }>("SELECT action, actor, target FROM audit_log WHERE org_id = $1 AND action <> 'sso.configured' ORDER BY id", orgId)
    expect(audit).toEqual([
      { action: "user.created", actor: "sso:oidc", target: account.account_id },
      { action: "sso.sign_in", actor: "sso:oidc", target: account.account_id }
    ])
    const events = await sp.query<{ event: string; data: unknown }>("SELECT event, data FROM outbox_events WHERE org_id = $1 ORDER BY created_at", orgId)
    expect(events.map((e) => e.event)).toEqual(["user.created"])
    expect(await sp.query("SELECT subject FROM sso_identities WHERE account_id = $1", account.account_id)).toEqual([
      { subject: `oidc:${idp.env.PUBLIC_BASE_URL}#${(await idp.query<{ id: string }>("SELECT id FROM accounts WHERE email = 'alice@example.com'"))[0]!.id}` }
    ])
    expect(await count("sso_login_attempts")).toBe(0)
  })

  it("signs the same person in again as the same account (nothing new made)", async () => {
    const accounts = await count("accounts")
    const memberships = await count("memberships")
    const { b, done } = await signInThroughIdp("alice@example.com")
    expect(new URL(done.url).pathname).toBe("/portal/")
    expect((await (await fetch(`${sp.url}/api/v1/account`, { headers: { cookie: b.cookie() } })).json()).email).toBe("alice@example.com")
    expect(await count("accounts")).toBe(accounts)
    expect(await count("memberships")).toBe(memberships)
    expect((await sp.query<{ action: string }>("SELECT action FROM audit_log WHERE org_id = $1 ORDER BY id DESC LIMIT 1", orgId))[0]!.action).toBe("sso.sign_in")
  })

  it("refuses the same answer twice (the sign-in is used once), and an answer without this browser's pr_sso cookie", async () => {
    const { callback } = await signInThroughIdp("alice@example.com")
    const sessions = await count("portal_sessions")
    const replay = await fetch(callback, { redirect: "manual" })
    expect(replay.status).toBe(401)
    const body = await replay.json()
    expect(body.error).toMatchObject({ code: "sso_rejected", details: { reason: "attempt_unknown" } })
    expect(replay.headers.getSetCookie().some((c) => c.startsWith("pr_session="))).toBe(false)
    expect(await count("portal_sessions")).toBe(sessions)
  })

  it("refuses an e-mail address outside the allowed domains: no account, no session", async () => {
    const accounts = await count("accounts")
    const sessions = await count("portal_sessions")
    const b = browser()
    const form = await b.go(`${sp.url}/api/v1/portal/sso/${orgId}/start`)
    const action = new URL(/action="([^"]+)"/.exec(await form.res.text())![1]!.replaceAll("&amp;", "&"), form.url).toString()
    const done = await b.go(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ email: "eve@elsewhere.test", password: PASSWORD }).toString() })
    expect(done.res.status).toBe(401)
    expect((await done.res.json()).error).toMatchObject({ code: "sso_rejected", details: { reason: "domain_not_allowed" } })
    expect(await count("accounts")).toBe(accounts)
    expect(await count("portal_sessions")).toBe(sessions)
  })

  it("an organisation without an identity provider: 404 sso_not_configured, no redirect", async () => {
    const { org_id } = await sp.runtime.runPromise(createOrg({ name: "no-sso" }))
    const res = await fetch(`${sp.url}/api/v1/portal/sso/${org_id}/start`, { redirect: "manual" })
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe("sso_not_configured")
    expect(res.headers.get("location")).toBeNull()
  })
})

describe("ID tokens the gateway refuses", () => {
  let hostile: Awaited<ReturnType<typeof startHostileOidcProvider>>
  let hostileOrg: string
  beforeAll(async () => {
    hostile = await startHostileOidcProvider("gateway-client")
    ;({ org_id: hostileOrg } = await sp.runtime.runPromise(createOrg({ name: "hostile" })))
    await sp.runtime.runPromise(setOidcIdp({ org_id: hostileOrg, issuer: hostile.issuer, client_id: "gateway-client", client_secret: "s", allowed_domains: "example.com" }, "test"))
  })
  afterAll(() => hostile?.close())

  const attempt = async (fault: IdTokenFault, email = "mallory@example.com") => {
    hostile.setFault(fault)
    hostile.setEmail(email)
    const b = browser()
    const done = await b.go(`${sp.url}/api/v1/portal/sso/${hostileOrg}/start`, { stopAt: (url) => new URL(url).pathname === "/portal/" })
    return { b, done }
  }

  it.each<[IdTokenFault, string]>([
    ["other_issuer", "issuer_mismatch"],
    ["other_audience", "audience_mismatch"],
    ["expired", "token_expired"],
    ["wrong_nonce", "nonce_mismatch"],
    ["foreign_signature", "signature_invalid"]
  ])("%s: 401 sso_rejected (%s); no account, membership, identity or session made", async (fault, reason) => {
    const before = await Promise.all(["accounts", "memberships", "sso_identities", "portal_sessions"].map(count))
    const { b, done } = await attempt(fault)
    expect(done.res.status).toBe(401)
    const body = await done.res.json()
    expect(body.error).toMatchObject({ code: "sso_rejected", details: { reason } })
    expect(body.error.message).toMatch(/^Single sign-on refused: /)
    expect(b.jar.has("pr_session")).toBe(false)
    expect(await Promise.all(["accounts", "memberships", "sso_identities", "portal_sessions"].map(count))).toEqual(before)
    expect(await sp.query("SELECT 1 FROM audit_log WHERE org_id = $1 AND action <> 'sso.configured'", hostileOrg)).toEqual([])
  })

  it("the same provider with nothing wrong signs the person in (the refusals above are the faults, not the harness)", async () => {
    const { b, done } = await attempt("valid")
    expect(new URL(done.url).pathname).toBe("/portal/")
    expect(b.jar.has("pr_session")).toBe(true)
    const me = await (await fetch(`${sp.url}/api/v1/account`, { headers: { cookie: b.cookie() } })).json()
    expect(me).toMatchObject({ email: "mallory@example.com", org_id: hostileOrg, role: "member" })
  })

  it("refuses an address that has an account in another organisation (an IdP cannot take it over)", async () => {
    const accounts = await count("accounts")
    const { b, done } = await attempt("valid", "alice@example.com")
    expect(done.res.status).toBe(401)
    expect((await done.res.json()).error.details.reason).toBe("account_elsewhere")
    expect(b.jar.has("pr_session")).toBe(false)
    expect(await count("accounts")).toBe(accounts)
  })
})
