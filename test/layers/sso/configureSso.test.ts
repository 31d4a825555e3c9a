import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg, createPortalToken } from "../../../layers/AdminOperations.ts"
import { freePort } from "../../support/nginxProxy.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { attackerCert, idpMetadataXml, idpSigningCert } from "../../support/ssoFixtures.ts"

/**
 * The operator's SSO configuration through the admin API (what `cli.ts sso idp ...` calls on an embedded gateway):
 * an OpenID provider checked by its discovery document, a SAML IdP from metadata or field by field; the client
 * secret sealed under the KEK and never shown; every change audited; bad input refused with nothing stored.
 */
let gw: TestGateway
let idp: TestGateway
let adminToken: string
let orgId: string
const SECRET = "sso-client-secret-7f3a1c"

beforeAll(async () => {
  // A real OpenID provider for the discovery check: a second gateway (its own provider), issuer on a known port.
  const port = await freePort()
  ;[gw, idp] = await Promise.all([startTestGateway(), startTestGateway({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` })])
  ;({ org_id: orgId } = await gw.runtime.runPromise(createOrg({ name: "sso-config" })))
  const { org_id: operatorOrg } = await gw.runtime.runPromise(createOrg({ name: "operators" }))
  ;({ token: adminToken } = await gw.runtime.runPromise(createPortalToken({ org_id: operatorOrg, abilities: "ability:admin" })))
}, 180_000)
afterAll(async () => {
  await gw?.close()
  await idp?.close()
})

const admin = (method: "GET" | "POST", path: string, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body)
  })

const rowOf = async (org: string) => (await gw.query<Record<string, unknown>>("SELECT * FROM sso_connections WHERE org_id = $1", org))[0]
const auditOf = (org: string) => gw.query<{ actor: string; action: string; details: unknown }>("SELECT actor, action, details FROM audit_log WHERE org_id = $1 AND action LIKE 'sso.%' ORDER BY id", org)

describe("sso idp set-oidc", () => {
  it("stores the issuer, client id, domains and role; the secret only sealed under the KEK; audited without the secret", async () => {
    const res = await admin("POST", "/api/admin/sso/oidc", {
      org_id: orgId,
      issuer: idp.env.PUBLIC_BASE_URL,
      client_id: "gateway-rp",
      client_secret: SECRET,
      allowed_domains: "Example.com, example.org",
      jit_role: "admin"
    })
    const body = await res.json()
    expect(res.status).toBe(200)
    expect(body).toMatchObject({
      org_id: orgId,
      protocol: "oidc",
      issuer: idp.env.PUBLIC_BASE_URL,
      client_id: "gateway-rp",
      client_secret: "(sealed)",
      allowed_domains: ["example.com", "example.org"],
      jit_role: "admin"
    })
    expect(JSON.stringify(body)).not.toContain(SECRET)
    const row = await rowOf(orgId)
    expect(String(row!.oidc_client_secret_enc)).toMatch(/^aead\d\./)
    expect(JSON.stringify(row)).not.toContain(SECRET)
    const shown = await admin("GET", `/api/admin/sso?org_id=${orgId}`)
    expect(shown.status).toBe(200)
    expect(await shown.json()).toEqual(body)
    const audit = await auditOf(orgId)
    expect(audit.map((a) => a.action)).toEqual(["sso.configured"])
    expect(JSON.stringify(audit)).not.toContain(SECRET)
  })

  it("refuses an issuer whose discovery document does not answer, a plain-http issuer off the loopback, a missing secret or domain: nothing stored", async () => {
    const { org_id: fresh } = await gw.runtime.runPromise(createOrg({ name: "sso-refused" }))
    const base = { org_id: fresh, issuer: idp.env.PUBLIC_BASE_URL, client_id: "rp", client_secret: SECRET, allowed_domains: "example.com" }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, issuer: `${gw.url}/no-such-issuer` }, "issuer"],
      [{ ...base, issuer: "http://idp.example.com" }, "issuer"],
      [{ ...base, client_secret: undefined }, "client_secret"],
      [{ ...base, allowed_domains: "" }, "allowed_domains"],
      [{ ...base, allowed_domains: "not a domain" }, "allowed_domains"],
      [{ ...base, jit_role: "superuser" }, "jit_role"]
    ]
    for (const [input, path] of cases) {
      const res = await admin("POST", "/api/admin/sso/oidc", input)
      const body = await res.json()
      expect(res.status, path).toBe(400)
      expect(body.error).toMatchObject({ code: "invalid_request", details: { path } })
      expect(JSON.stringify(body)).not.toContain(SECRET)
    }
    expect(await rowOf(fresh)).toBeUndefined()
    expect(await auditOf(fresh)).toEqual([])
  })

  it("answers 404 for an organisation that does not exist; needs ability:admin", async () => {
    const res = await admin("POST", "/api/admin/sso/oidc", { org_id: "org_missing", issuer: idp.env.PUBLIC_BASE_URL, client_id: "rp", client_secret: SECRET, allowed_domains: "example.com" })
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe("not_found")
    const { token } = await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:keys.write" }))
    const denied = await fetch(`${gw.url}/api/admin/sso/oidc`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ org_id: orgId }) })
    expect(denied.status).toBe(403)
    expect((await denied.json()).error.code).toBe("insufficient_ability")
  })
})

describe("sso idp set-saml", () => {
  it("reads the entity id, HTTP-Redirect sign-in URL and signing certificate from metadata; replaces the OIDC provider", async () => {
    const res = await admin("POST", "/api/admin/sso/saml", {
      org_id: orgId,
      metadata_xml: idpMetadataXml("https://idp.example.com/saml", "https://idp.example.com/sso"),
      allowed_domains: "example.com"
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      protocol: "saml",
      entity_id: "https://idp.example.com/saml",
      sso_url: "https://idp.example.com/sso",
      certificates: 1,
      jit_role: "member",
      metadata_url: null
    })
    const row = await rowOf(orgId)
    expect(row!.oidc_client_secret_enc).toBeNull()
    expect(row!.saml_certificates).toEqual([expect.stringContaining("-----BEGIN CERTIFICATE-----")])
    expect((await auditOf(orgId)).map((a) => a.action)).toEqual(["sso.configured", "sso.configured"])
  })

  it("field by field: entity id, sign-in URL and a PEM certificate (two while the IdP rolls its key)", async () => {
    const res = await admin("POST", "/api/admin/sso/saml", {
      org_id: orgId,
      entity_id: "urn:example:idp",
      sso_url: "http://127.0.0.1:9/sso",
      certificate: idpSigningCert + attackerCert,
      allowed_domains: "example.com"
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ entity_id: "urn:example:idp", sso_url: "http://127.0.0.1:9/sso", certificates: 2 })
  })

  it("refuses metadata that is not an IdP's, a DOCTYPE, a broken certificate, a plain-http sign-in URL off the loopback: nothing changed", async () => {
    const before = await rowOf(orgId)
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ metadata_xml: `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>` }, "IDPSSODescriptor"],
      [{ metadata_xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>` }, "DOCTYPE"],
      [{ metadata_xml: "not xml <" }, "well-formed"],
      [{ entity_id: "urn:x", sso_url: "https://idp.example.com/sso", certificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" }, "X.509"],
      [{ entity_id: "urn:x", sso_url: "http://idp.example.com/sso", certificate: idpSigningCert }, "https"],
      [{ entity_id: "urn:x", certificate: idpSigningCert }, "sso_url"]
    ]
    for (const [input, why] of bad) {
      const res = await admin("POST", "/api/admin/sso/saml", { org_id: orgId, allowed_domains: "example.com", ...input })
      const body = await res.json()
      expect(res.status, why).toBe(400)
      expect(body.error.code).toBe("invalid_request")
      expect(body.error.message, why).toContain(why)
    }
    expect(await rowOf(orgId)).toEqual(before)
  })
})

describe("sso idp remove", () => {
  it("turns single sign-on off (audited); then show and remove answer 404 sso_not_configured", async () => {
    const res = await admin("POST", "/api/admin/sso/remove", { org_id: orgId })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ org_id: orgId, removed: true })
    expect(await rowOf(orgId)).toBeUndefined()
    expect((await auditOf(orgId)).at(-1)!.action).toBe("sso.removed")
    for (const r of [await admin("GET", `/api/admin/sso?org_id=${orgId}`), await admin("POST", "/api/admin/sso/remove", { org_id: orgId })]) {
      expect(r.status).toBe(404)
      expect((await r.json()).error.code).toBe("sso_not_configured")
    }
  })
})
