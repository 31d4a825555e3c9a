import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg, setSamlIdp } from "../../../layers/AdminOperations.ts"
import { browser } from "../../support/browser.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { freePort } from "../../support/nginxProxy.ts"
import { type SamlFault, startSamlTestIdp } from "../../support/samlTestIdp.ts"
import { idpMetadataXml } from "../../support/ssoFixtures.ts"

/**
 * SAML 2.0 sign-in to the portal (SP-initiated; AuthnRequest over HTTP-Redirect, response over HTTP-POST) against
 * a real IdP implementation started here: samlify's IdP role, configured from the gateway's own SP metadata. Every
 * refusal (unsigned, foreign key, expired, other audience, wrapped signature, replayed) answers 401 `sso_rejected`
 * and creates nothing.
 */
let sp: TestGateway
let idp: Awaited<ReturnType<typeof startSamlTestIdp>>
let orgId: string
const IDP_ENTITY = "https://idp.test.example/saml"

beforeAll(async () => {
  const port = await freePort()
  sp = await startTestGateway({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` })
  idp = await startSamlTestIdp(IDP_ENTITY)
  ;({ org_id: orgId } = await sp.runtime.runPromise(createOrg({ name: "saml-org" })))
  await sp.runtime.runPromise(setSamlIdp({ org_id: orgId, metadata_xml: idpMetadataXml(IDP_ENTITY, idp.ssoUrl), allowed_domains: "example.com", jit_role: "member" }, "test"))
  const metadata = await fetch(`${sp.url}/api/v1/portal/sso/${orgId}/saml/metadata`)
  expect(metadata.status).toBe(200)
  idp.setSpMetadata(await metadata.text())
}, 180_000)
afterAll(async () => {
  await sp?.close()
  await idp?.close()
})

const count = async (table: string) => Number((await sp.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n)
const TABLES = ["accounts", "memberships", "sso_identities", "portal_sessions"]

/** Start at the gateway, get the IdP's auto-post form; `post` sends a SAMLResponse (the IdP's, or another) to the ACS. */
const startSignIn = async (fault: SamlFault = "valid", user = "alice@example.com") => {
  idp.setFault(fault)
  idp.setUser(user)
  const b = browser()
  const form = await b.go(`${sp.url}/api/v1/portal/sso/${orgId}/start`)
  expect(form.hops[1]).toMatch(new RegExp(`^${idp.ssoUrl}\\?SAMLRequest=`))
  expect(form.res.status).toBe(200)
  const html = await form.res.text()
  const action = /action="([^"]+)"/.exec(html)![1]!
  const fromIdp = /name="SAMLResponse" value="([^"]+)"/.exec(html)![1]!
  const post = (samlResponse = fromIdp) =>
    b.go(action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: "" }).toString(),
      stopAt: (url) => new URL(url).pathname === "/portal/"
    })
  return { b, action, fromIdp, post }
}

const expectRefused = async (res: Response, reason: string) => {
  expect(res.status).toBe(401)
  const body = await res.json()
  expect(body.error).toMatchObject({ code: "sso_rejected", details: { reason } })
  return body
}

describe("SAML sign-in against samlify's IdP", () => {
  it("the gateway's SP metadata names its entity id and HTTP-POST ACS and asks for signed assertions", async () => {
    const xml = await (await fetch(`${sp.url}/api/v1/portal/sso/${orgId}/saml/metadata`)).text()
    expect(xml).toContain(`entityID="${sp.env.PUBLIC_BASE_URL}/api/v1/portal/sso/${orgId}/saml/metadata"`)
    expect(xml).toContain(`Location="${sp.env.PUBLIC_BASE_URL}/api/v1/portal/sso/${orgId}/saml/acs"`)
    expect(xml).toContain('WantAssertionsSigned="true"')
  })

  it("a signed assertion signs the person in: just-in-time member with the configured role, a portal session", async () => {
    const { b, action, post } = await startSignIn()
    expect(action).toBe(`${sp.env.PUBLIC_BASE_URL}/api/v1/portal/sso/${orgId}/saml/acs`)
    const done = await post()
    expect(new URL(done.url).pathname).toBe("/portal/")
    expect(b.jar.has("pr_session")).toBe(true)
    const me = await (await fetch(`${sp.url}/api/v1/account`, { headers: { cookie: b.cookie() } })).json()
    expect(me).toMatchObject({ email: "alice@example.com", email_verified: true, org_id: orgId, role: "member" })
    expect(await sp.query("SELECT subject FROM sso_identities WHERE account_id = $1", me.account_id)).toEqual([{ subject: `saml:${IDP_ENTITY}#alice@example.com` }])
    const audit = await sp.query<{ action: string; actor: string }>("SELECT action, actor FROM audit_log WHERE org_id = $1 AND action <> 'sso.configured' ORDER BY id", orgId)
    expect(audit).toEqual([{ action: "user.created", actor: "sso:saml" }, { action: "sso.sign_in", actor: "sso:saml" }])
  })

  it.each<[SamlFault, string]>([
    ["unsigned", "signature_invalid"],
    ["unsigned_assertion_in_signed_response", "signature_invalid"],
    ["attacker_key", "signature_invalid"],
    ["expired", "token_expired"],
    ["other_audience", "audience_mismatch"]
  ])("%s: 401 sso_rejected (%s); nothing created", async (fault, reason) => {
    const before = await Promise.all(TABLES.map(count))
    const { b, post } = await startSignIn(fault, "bob@example.com")
    const done = await post()
    await expectRefused(done.res, reason)
    expect(b.jar.has("pr_session")).toBe(false)
    expect(await Promise.all(TABLES.map(count))).toEqual(before)
    expect(await sp.query("SELECT 1 FROM accounts WHERE email = 'bob@example.com'")).toEqual([])
  })

  it("a replayed response is refused: once more in the same browser (the sign-in was used), and in a new sign-in (InResponseTo)", async () => {
    const first = await startSignIn()
    expect(new URL((await first.post()).url).pathname).toBe("/portal/")
    const sessions = await count("portal_sessions")
    await expectRefused((await first.post(first.fromIdp)).res, "attempt_unknown")
    const second = await startSignIn()
    await expectRefused((await second.post(first.fromIdp)).res, "state_mismatch")
    expect(await count("portal_sessions")).toBe(sessions)
  })

  it("XML signature wrapping is refused: a forged assertion beside, around or instead of the signed one", async () => {
    const before = await Promise.all(TABLES.map(count))
    const pieces = (xml: string) => {
      const assertion = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0]
      const forged = assertion.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, "").replaceAll("alice@example.com", "ceo@example.com")
      return { assertion, forged }
    }
    const variants: Array<[string, (xml: string) => string]> = [
      ["forged first, the signed one after it (same ID)", (xml) => {
        const { assertion, forged } = pieces(xml)
        return xml.replace(assertion, forged + assertion)
      }],
      ["forged in its place, the signed one hidden inside it", (xml) => {
        const { assertion, forged } = pieces(xml)
        return xml.replace(assertion, forged.replace("</saml:Assertion>", `<saml:Advice>${assertion}</saml:Advice></saml:Assertion>`))
      }],
      ["the signed one moved into the response's Extensions, the forged one in its place", (xml) => {
        const { assertion, forged } = pieces(xml)
        return xml.replace(assertion, forged).replace(/(<samlp:Response[^>]*>)/, `$1<samlp:Extensions>${assertion}</samlp:Extensions>`)
      }],
      ["the signed assertion's NameID changed, its signature kept", (xml) => xml.replaceAll("alice@example.com", "ceo@example.com")]
    ]
    for (const [name, tamper] of variants) {
      // Each tampers with the answer to its own sign-in, so InResponseTo is right: only the signature can refuse it.
      const attempt = await startSignIn()
      const tampered = tamper(Buffer.from(attempt.fromIdp, "base64").toString("utf8"))
      expect(tampered, name).toContain("ceo@example.com")
      const done = await attempt.post(Buffer.from(tampered).toString("base64"))
      expect(done.res.status, name).toBe(401)
      expect((await done.res.json()).error, name).toMatchObject({ code: "sso_rejected", details: { reason: "signature_invalid" } })
      expect(attempt.b.jar.has("pr_session"), name).toBe(false)
    }
    expect(await sp.query("SELECT 1 FROM accounts WHERE email = 'ceo@example.com'")).toEqual([])
    expect(await Promise.all(TABLES.map(count))).toEqual(before)
  })

  it("a response without this browser's sign-in, or a form without SAMLResponse: 401 sso_rejected", async () => {
    const { fromIdp, action } = await startSignIn()
    const stranger = await fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ SAMLResponse: fromIdp }).toString() })
    await expectRefused(stranger, "attempt_unknown")
    const empty = await fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "RelayState=x" })
    await expectRefused(empty, "response_invalid")
  })
})
