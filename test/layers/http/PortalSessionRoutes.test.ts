import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
const EMAIL = "session-user@example.org"
const PASSWORD = "session password 1"

beforeAll(async () => {
  gw = await startTestGateway()
  const res = await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify({ email: EMAIL, password: PASSWORD }) })
  expect(res.status).toBe(201)
})
afterAll(() => gw.close())

const login = async (body: unknown = { email: EMAIL, password: PASSWORD }) => {
  const res = await fetch(`${gw.url}/api/v1/portal/login`, { method: "POST", body: JSON.stringify(body) })
  const setCookies = res.headers.getSetCookie()
  return { res, setCookies, jar: setCookies.map((c) => c.split(";")[0]).join("; "), json: await res.json() }
}

describe("portal sessions", () => {
  it("signs in with an HttpOnly SameSite=Lax session cookie and a readable CSRF cookie, not Secure on 127.0.0.1", async () => {
    const { res, setCookies, json } = await login()
    expect(res.status).toBe(200)
    const session = setCookies.find((c) => c.startsWith("pr_session="))!
    const csrf = setCookies.find((c) => c.startsWith("pr_csrf="))!
    expect(session).toMatch(/HttpOnly/i)
    expect(session).toMatch(/SameSite=Lax/i)
    expect(session).not.toMatch(/Secure/i)
    expect(csrf).not.toMatch(/HttpOnly/i)
    expect(csrf.split(";")[0]).toBe(`pr_csrf=${json.csrf_token}`)
    expect(json).toMatchObject({ role: "owner" })
    expect(json.abilities).toContain("ability:keys.write")
    expect(json.abilities).not.toContain("ability:admin")
    // only hashes are stored
    const token = session.split(";")[0].slice("pr_session=".length)
    const dump = JSON.stringify(await gw.query("SELECT * FROM portal_sessions"))
    expect(dump).not.toContain(token)
    expect(dump).not.toContain(json.csrf_token)
  })

  it("marks the cookies Secure when the request host is not the loopback", async () => {
    const setCookies = await new Promise<Array<string>>((resolve, reject) => {
      const req = httpRequest(`${gw.url}/api/v1/portal/login`, { method: "POST", headers: { host: "portal.example.org" } }, (res) => {
        res.resume()
        resolve(res.headers["set-cookie"] ?? [])
      })
      req.on("error", reject)
      req.end(JSON.stringify({ email: EMAIL, password: PASSWORD }))
    })
    expect(setCookies).toHaveLength(2)
    for (const c of setCookies) expect(c).toMatch(/;\s*Secure/i)
  })

  it("accepts the cookie on reads, and on writes only with the matching X-CSRF-Token", async () => {
    const { jar, json } = await login()
    expect((await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: jar } })).status).toBe(200)
    const write = (headers: Record<string, string>) => fetch(`${gw.url}/api/keys`, { method: "POST", headers: { cookie: jar, ...headers }, body: "{}" })
    for (const headers of [{}, { "x-csrf-token": "wrong" }] as Array<Record<string, string>>) {
      const res = await write(headers)
      expect(res.status).toBe(403)
      expect(await res.json()).toEqual({
        error: { code: "csrf_failed", message: "Cookie-authenticated writes need the X-CSRF-Token header matching the pr_csrf cookie." }
      })
    }
    // a CSRF value from another session does not fit this one, even when cookie and header agree
    const other = await login()
    const swapped = jar.replace(/pr_csrf=[^;]+/, `pr_csrf=${other.json.csrf_token}`)
    const mixed = await fetch(`${gw.url}/api/keys`, { method: "POST", headers: { cookie: swapped, "x-csrf-token": other.json.csrf_token }, body: "{}" })
    expect(mixed.status).toBe(403)
    const ok = await write({ "x-csrf-token": json.csrf_token })
    expect(ok.status).toBe(201)
    const audit = await gw.query<{ actor: string }>("SELECT actor FROM audit_log WHERE target = $1", (await ok.json()).id)
    expect(audit[0].actor).toBe(`account:${json.account_id}`)
  })

  it("refuses wrong passwords and unknown e-mails alike with 401 invalid_credentials", async () => {
    for (const body of [{ email: EMAIL, password: "not the password" }, { email: "ghost@example.org", password: PASSWORD }]) {
      const { res, setCookies, json } = await login(body)
      expect(res.status).toBe(401)
      expect(json).toEqual({ error: { code: "invalid_credentials", message: "The e-mail address or password is wrong." } })
      expect(setCookies).toEqual([])
    }
    const elsewhere = await login({ email: EMAIL, password: PASSWORD, org_id: "org_not_mine" })
    expect(elsewhere.res.status).toBe(403)
    expect(elsewhere.json).toEqual({ error: { code: "not_a_member", message: "This account is not a member of that organisation." } })
    expect(elsewhere.setCookies).toEqual([])
  })

  it("signs out: the session is deleted and the cookie no longer works", async () => {
    const { jar, json } = await login()
    const out = await fetch(`${gw.url}/api/v1/portal/logout`, { method: "POST", headers: { cookie: jar, "x-csrf-token": json.csrf_token } })
    expect(out.status).toBe(204)
    expect(out.headers.getSetCookie().some((c) => c.startsWith("pr_session=;") || /pr_session=.*Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c))).toBe(true)
    const after = await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: jar } })
    expect(after.status).toBe(401)
    expect(await after.json()).toEqual({ error: { code: "portal_auth_required", message: "The portal session is missing, expired or signed out." } })
    // The receipt reads answer their own code for the same refusal, with the same message.
    const receipts = await fetch(`${gw.url}/api/v1/receipts`, { headers: { cookie: jar } })
    expect(receipts.status).toBe(401)
    expect(await receipts.json()).toEqual({ error: { code: "auth_required", message: "The portal session is missing, expired or signed out." } })
  })

  it("never lets a session cookie stand in for a gateway key, nor a gateway key for a session", async () => {
    const { jar, json } = await login()
    const key = await (await fetch(`${gw.url}/api/keys`, { method: "POST", headers: { cookie: jar, "x-csrf-token": json.csrf_token }, body: "{}" })).json()
    // gateway key + session cookie: the bearer decides, and a gateway key is refused on portal routes
    const res = await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: jar, authorization: `Bearer ${key.api_key}` } })
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe("portal_auth_required")
  })
})
