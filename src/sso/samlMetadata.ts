import { DOMParser } from "@xmldom/xmldom"
import { X509Certificate } from "node:crypto"

const MD = "urn:oasis:names:tc:SAML:2.0:metadata"
const DS = "http://www.w3.org/2000/09/xmldsig#"
export const HTTP_REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"

/** What the gateway needs of a SAML 2.0 IdP, read from its metadata. */
export interface SamlIdpMetadata {
  readonly entityId: string
  /** Its SingleSignOnService for the HTTP-Redirect binding (where the AuthnRequest goes). */
  readonly ssoUrl: string
  /** Its signing certificates in PEM. */
  readonly certificates: ReadonlyArray<string>
}

/** Metadata that cannot be used, with a sentence saying why. */
export class InvalidSamlMetadata extends Error {}

/** Base64 DER (as in metadata, whitespace anywhere) or PEM -> PEM; throws when it is not an X.509 certificate. */
export const certificateToPem = (text: string): string => {
  const body = text.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "")
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) throw new InvalidSamlMetadata("a certificate is not base64 or PEM")
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`
  try {
    new X509Certificate(pem)
  } catch {
    throw new InvalidSamlMetadata("a certificate does not parse as X.509")
  }
  return pem
}

/** Every PEM certificate in a file's text (an IdP rolling its key publishes two). */
export const pemCertificates = (text: string): ReadonlyArray<string> => {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) throw new InvalidSamlMetadata("no PEM certificate (-----BEGIN CERTIFICATE-----) found")
  return blocks.map(certificateToPem)
}

/**
 * Reads an IdP's EntityDescriptor: its entityID, the HTTP-Redirect SingleSignOnService of its IDPSSODescriptor and
 * the certificates of its signing keys (KeyDescriptor with use="signing" or no use). No DTD or entity is resolved.
 */
export const parseSamlIdpMetadata = (xml: string): SamlIdpMetadata => {
  if (/<!DOCTYPE/i.test(xml)) throw new InvalidSamlMetadata("metadata with a DOCTYPE is refused")
  let doc: Document
  try {
    const refuse = (message: string) => {
      throw new InvalidSamlMetadata(`metadata is not well-formed XML: ${String(message).slice(0, 200)}`)
    }
    doc = new DOMParser({ errorHandler: { warning: () => {}, error: refuse, fatalError: refuse } }).parseFromString(xml, "text/xml") as unknown as Document
  } catch (e) {
    throw e instanceof InvalidSamlMetadata ? e : new InvalidSamlMetadata("metadata is not well-formed XML")
  }
  const root = doc.documentElement
  const entity = root?.localName === "EntityDescriptor" && root.namespaceURI === MD
    ? root
    : (Array.from(doc.getElementsByTagNameNS(MD, "EntityDescriptor")) as Array<Element>)[0]
  if (entity === undefined || entity === null) throw new InvalidSamlMetadata("no md:EntityDescriptor element")
  const entityId = entity.getAttribute("entityID") ?? ""
  if (entityId === "") throw new InvalidSamlMetadata("the EntityDescriptor has no entityID")
  const idp = (Array.from(entity.getElementsByTagNameNS(MD, "IDPSSODescriptor")) as Array<Element>)[0]
  if (idp === undefined) throw new InvalidSamlMetadata("no IDPSSODescriptor: this is not an identity provider's metadata")
  const services = Array.from(idp.getElementsByTagNameNS(MD, "SingleSignOnService")) as Array<Element>
  const redirect = services.find((s) => s.getAttribute("Binding") === HTTP_REDIRECT_BINDING)
  if (redirect === undefined) throw new InvalidSamlMetadata("no SingleSignOnService with the HTTP-Redirect binding")
  const ssoUrl = checkSsoUrl(redirect.getAttribute("Location") ?? "")
  const certificates = (Array.from(idp.getElementsByTagNameNS(MD, "KeyDescriptor")) as Array<Element>)
    .filter((k) => (k.getAttribute("use") ?? "signing") === "signing")
    .flatMap((k) => Array.from(k.getElementsByTagNameNS(DS, "X509Certificate")) as Array<Element>)
    .map((c) => certificateToPem(c.textContent ?? ""))
  if (certificates.length === 0) throw new InvalidSamlMetadata("no signing certificate (KeyDescriptor/X509Certificate)")
  return { entityId, ssoUrl, certificates }
}

/** An https URL (http only on the loopback, for development). */
export const checkSsoUrl = (text: string): string => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new InvalidSamlMetadata(`the sign-in URL is not a URL: ${text.slice(0, 200)}`)
  }
  if (!isSecureOrLoopback(url)) throw new InvalidSamlMetadata(`the sign-in URL must be https (http only on the loopback): ${text.slice(0, 200)}`)
  return url.toString()
}

export const isSecureOrLoopback = (url: URL) =>
  url.protocol === "https:" || (url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname))
