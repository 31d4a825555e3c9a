import * as samlify from "samlify"
import { createServer, type Server } from "node:http"
import { attackerCert, attackerKey, idpSigningCert, idpSigningKey } from "./ssoFixtures.ts"

/** What the IdP's next response gets wrong (`valid`: nothing). */
export type SamlFault =
  | "valid"
  | "expired"
  | "other_audience"
  | "unsigned"
  | "unsigned_assertion_in_signed_response"
  | "attacker_key"

// The IdP here is the test's own: it does not need to schema-check the gateway's AuthnRequest (the gateway is what
// is under test). samlify refuses to parse anything until a validator is set.
samlify.setSchemaValidator({ validate: () => Promise.resolve("skipped") })

const { binding, format } = samlify.Constants.namespace

/**
 * A SAML 2.0 identity provider on 127.0.0.1 built on samlify's IdP role: `GET /sso` takes the gateway's
 * AuthnRequest (HTTP-Redirect binding), "signs in" the person set with `setUser`, and answers the auto-post form
 * (HTTP-POST binding) with a response for the gateway's ACS, signed with test/fixtures/sso/idp-signing.key, with
 * one chosen fault. The service provider it answers is built from the gateway's own SP metadata.
 */
export const startSamlTestIdp = async (entityId: string) => {
  let user = "alice@example.com"
  let fault: SamlFault = "valid"
  let spMetadata = ""
  let lastResponse: string | undefined
  let baseUrl = ""
  const idpWith = (key: string, cert: string) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: key,
      signingCert: cert,
      singleSignOnService: [{ Binding: binding.redirect, Location: `${baseUrl}/sso` }],
      singleLogoutService: [{ Binding: binding.redirect, Location: `${baseUrl}/slo` }],
      nameIDFormat: [format.emailAddress]
    })
  /** The gateway as samlify sees it: from its metadata, or the same with other signing wishes (faults). */
  const serviceProvider = () => {
    const sp = samlify.ServiceProvider({ metadata: spMetadata })
    if (fault !== "unsigned" && fault !== "unsigned_assertion_in_signed_response") return sp
    return samlify.ServiceProvider({
      entityID: sp.entityMeta.getEntityID(),
      assertionConsumerService: [{ Binding: binding.post, Location: sp.entityMeta.getAssertionConsumerService("post") as string }],
      wantAssertionsSigned: false,
      wantMessageSigned: fault === "unsigned_assertion_in_signed_response"
    })
  }
  /** Tags of samlify's login response template, as it fills them, with the fault applied. */
  const tags = (sp: samlify.ServiceProviderInstance, inResponseTo: string) => {
    const now = Date.now()
    const [notBefore, notOnOrAfter] = fault === "expired" ? [now - 20 * 60_000, now - 10 * 60_000] : [now, now + 5 * 60_000]
    const acs = sp.entityMeta.getAssertionConsumerService("post") as string
    return {
      ID: `_${crypto.randomUUID()}`,
      AssertionID: `_${crypto.randomUUID()}`,
      Destination: acs,
      Audience: fault === "other_audience" ? "https://someone-else.example.com/sp" : sp.entityMeta.getEntityID(),
      EntityID: sp.entityMeta.getEntityID(),
      SubjectRecipient: acs,
      Issuer: entityId,
      IssueInstant: new Date(now).toISOString(),
      AssertionConsumerServiceURL: acs,
      StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
      ConditionsNotBefore: new Date(notBefore).toISOString(),
      ConditionsNotOnOrAfter: new Date(notOnOrAfter).toISOString(),
      SubjectConfirmationDataNotOnOrAfter: new Date(notOnOrAfter).toISOString(),
      NameIDFormat: format.emailAddress,
      NameID: user,
      InResponseTo: inResponseTo,
      AuthnStatement: "",
      AttributeStatement: ""
    }
  }
  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", baseUrl)
      if (url.pathname !== "/sso") {
        res.writeHead(404)
        return res.end()
      }
      const sp = serviceProvider()
      const idp = fault === "attacker_key" ? idpWith(attackerKey, attackerCert) : idpWith(idpSigningKey, idpSigningCert)
      const request = await idp.parseLoginRequest(sp, "redirect", { query: Object.fromEntries(url.searchParams), octetString: url.search.slice(1) })
      const inResponseTo = String(request.extract.request?.id ?? "")
      const { context } = await idp.createLoginResponse(sp, { extract: request.extract }, "post", { email: user }, (template: string) => {
        const values = tags(sp, inResponseTo)
        return { id: values.ID, context: samlify.SamlLib.replaceTagsByValue(template, values) }
      })
      lastResponse = context
      const acs = sp.entityMeta.getAssertionConsumerService("post") as string
      res.writeHead(200, { "content-type": "text/html" })
      res.end(`<html><body onload="document.forms[0].submit()"><form method="post" action="${acs}">` +
        `<input type="hidden" name="SAMLResponse" value="${context}"/><input type="hidden" name="RelayState" value=""/></form></body></html>`)
    } catch (e) {
      res.writeHead(500, { "content-type": "text/plain" })
      res.end(String((e as Error)?.stack ?? e))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  return {
    ssoUrl: `${baseUrl}/sso`,
    setSpMetadata: (xml: string) => void (spMetadata = xml),
    setUser: (email: string) => void (user = email),
    setFault: (f: SamlFault) => void (fault = f),
    /** The base64 SAMLResponse of the last answer (for replays and tampering). */
    lastResponse: () => lastResponse,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
