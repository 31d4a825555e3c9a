import { readFileSync } from "node:fs"

/** The test IdP's signing key pair and a second pair the gateway never trusts (test/fixtures/sso/README.md). */
export const idpSigningKey = readFileSync(new URL("../fixtures/sso/idp-signing.key", import.meta.url), "utf8")
export const idpSigningCert = readFileSync(new URL("../fixtures/sso/idp-signing.crt", import.meta.url), "utf8")
export const attackerKey = readFileSync(new URL("../fixtures/sso/attacker.key", import.meta.url), "utf8")
export const attackerCert = readFileSync(new URL("../fixtures/sso/attacker.crt", import.meta.url), "utf8")

/** A certificate's base64 body, as metadata carries it. */
export const certificateBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "")

/** An IdP's metadata: entity id, HTTP-Redirect and HTTP-POST sign-in services, one signing certificate. */
export const idpMetadataXml = (entityId: string, ssoUrl: string, cert = idpSigningCert) => `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateBody(cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${ssoUrl}"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ssoUrl}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`
