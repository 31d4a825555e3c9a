import { Effect, Redacted } from "effect"
import * as client from "openid-client"
import { Keys } from "../../services/Keys.ts"
import { type Role, ROLES } from "../../services/Accounts.ts"
import { type SsoConnection, SsoConnections } from "../../services/SsoConnections.ts"
import { invalidInput } from "../AdminErrors.ts"
import {
  certificateToPem,
  checkSsoUrl,
  InvalidSamlMetadata,
  isSecureOrLoopback,
  parseSamlIdpMetadata,
  pemCertificates,
  type SamlIdpMetadata
} from "../../src/sso/samlMetadata.ts"
import { oidcDiscoveryOptions } from "./oidcDiscovery.ts"

/**
 * The operator's SSO commands (`cli.ts sso idp ...`, `/api/admin/sso/*`; docs/sso.md). Inputs are the CLI's JSON;
 * secrets arrive in the body (the CLI read them from a file), never from argv, and are never echoed.
 */
type Input = Readonly<Record<string, unknown>>

const str = (input: Input, field: string): string | undefined => {
  const v = input[field]
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined
}

const orgOf = (input: Input) =>
  Effect.gen(function*() {
    const org = str(input, "org_id")
    if (org !== undefined) return org
    const prefix = str(input, "key_prefix")
    if (prefix !== undefined) return yield* (yield* Keys).orgOfPrefix(prefix)
    return yield* invalidInput("org_id", "Give org_id (--org) or key_prefix (--key-prefix).")
  })

const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/

/** `allowed_domains`: a comma list or an array of e-mail domains, at least one (nobody may sign in otherwise). */
const allowedDomains = (input: Input) =>
  Effect.gen(function*() {
    const raw = input["allowed_domains"]
    const list = (Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : [])
      .map((d) => (typeof d === "string" ? d.trim().toLowerCase() : ""))
      .filter((d) => d !== "")
    if (list.length === 0) return yield* invalidInput("allowed_domains", "allowed_domains is required (--domains example.com[,example.org]): the e-mail domains this IdP may sign in.")
    const bad = list.find((d) => !DOMAIN.test(d))
    if (bad !== undefined) return yield* invalidInput("allowed_domains", `Not a domain name: ${bad.slice(0, 100)}`)
    return [...new Set(list)]
  })

const jitRole = (input: Input) =>
  Effect.gen(function*() {
    const role = str(input, "jit_role") ?? "member"
    if (!(ROLES as ReadonlyArray<string>).includes(role)) return yield* invalidInput("jit_role", `jit_role is one of ${ROLES.join(", ")} (default member).`)
    return role as Role
  })

/** What `show` and `set` print: never the client secret. */
export const connectionView = (c: SsoConnection) => ({
  org_id: c.orgId,
  protocol: c.protocol,
  allowed_domains: c.allowedDomains,
  jit_role: c.jitRole,
  updated_at: c.updatedAt.toISOString(),
  ...(c.protocol === "oidc"
    ? { issuer: c.issuer, client_id: c.clientId, client_secret: "(sealed)" }
    : { entity_id: c.entityId, sso_url: c.ssoUrl, certificates: c.certificates.length, metadata_url: c.metadataUrl ?? null })
})

/**
 * `cli.ts sso idp set-oidc`: an OpenID Connect provider. The issuer must answer its discovery document with the same
 * `issuer` (https, or http on the loopback for development), so a typo is found now rather than at first sign-in.
 */
export const setOidcIdp = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const orgId = yield* orgOf(input)
    const issuer = str(input, "issuer")
    if (issuer === undefined) return yield* invalidInput("issuer", "issuer is required (--issuer https://idp.example.com).")
    const issuerUrl = yield* Effect.try({ try: () => new URL(issuer), catch: () => invalidInput("issuer", "issuer is not a URL.") })
    if (!isSecureOrLoopback(issuerUrl)) return yield* invalidInput("issuer", "issuer must be an https URL (http only on the loopback).")
    const clientId = str(input, "client_id")
    if (clientId === undefined) return yield* invalidInput("client_id", "client_id is required (--client-id).")
    const secret = input["client_secret"]
    if (typeof secret !== "string" || secret.trim() === "") {
      return yield* invalidInput("client_secret", "client_secret is required (--client-secret-file PATH: a file holding the secret).")
    }
    const domains = yield* allowedDomains(input)
    const role = yield* jitRole(input)
    yield* Effect.tryPromise({
      try: () => client.discovery(issuerUrl, clientId, undefined, undefined, oidcDiscoveryOptions(issuerUrl)),
      catch: (e) => invalidInput("issuer", `The issuer's discovery document (${issuer}/.well-known/openid-configuration) could not be used: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500))
    })
    const connection = yield* (yield* SsoConnections).setOidc({
      actor,
      orgId,
      issuer,
      clientId,
      clientSecret: Redacted.make(secret.trim()),
      allowedDomains: domains,
      jitRole: role
    })
    return connectionView(connection)
  })

const MAX_METADATA_BYTES = 1_000_000

const fromMetadataUrl = (url: string) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.try({ try: () => new URL(url), catch: () => invalidInput("metadata_url", "metadata_url is not a URL.") })
    if (!isSecureOrLoopback(parsed)) return yield* invalidInput("metadata_url", "metadata_url must be https (http only on the loopback).")
    const text = yield* Effect.tryPromise({
      try: async () => {
        const res = await fetch(parsed, { redirect: "error", signal: AbortSignal.timeout(10_000) })
        if (!res.ok) throw new Error(`HTTP ${res.status}`)
        const body = await res.text()
        if (body.length > MAX_METADATA_BYTES) throw new Error("larger than 1 MB")
        return body
      },
      catch: (e) => invalidInput("metadata_url", `The metadata could not be read from ${url.slice(0, 200)}: ${e instanceof Error ? e.message : String(e)}`)
    })
    return text
  })

/**
 * `cli.ts sso idp set-saml`: a SAML 2.0 IdP from its metadata (XML, or a URL read now and not refreshed), or field by
 * field (entity id, sign-in URL, certificate). Fields given beside metadata override it.
 */
export const setSamlIdp = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const orgId = yield* orgOf(input)
    const metadataUrl = str(input, "metadata_url")
    const metadataXml = str(input, "metadata_xml") ?? (metadataUrl === undefined ? undefined : yield* fromMetadataUrl(metadataUrl))
    const domains = yield* allowedDomains(input)
    const role = yield* jitRole(input)
    const parsed = yield* Effect.try({
      try: (): Partial<SamlIdpMetadata> => {
        const fromMetadata = metadataXml === undefined ? {} : parseSamlIdpMetadata(metadataXml)
        const entityId = str(input, "entity_id")
        const ssoUrl = str(input, "sso_url")
        const certificate = str(input, "certificate")
        return {
          ...fromMetadata,
          ...(entityId === undefined ? {} : { entityId }),
          ...(ssoUrl === undefined ? {} : { ssoUrl: checkSsoUrl(ssoUrl) }),
          ...(certificate === undefined ? {} : { certificates: certificate.includes("-----BEGIN") ? pemCertificates(certificate) : [certificateToPem(certificate)] })
        }
      },
      catch: (e) => invalidInput(metadataXml === undefined ? "certificate" : "metadata", e instanceof InvalidSamlMetadata ? e.message : "The metadata could not be read.")
    })
    if (parsed.entityId === undefined) return yield* invalidInput("entity_id", "entity_id is required (--entity-id), or give the IdP's metadata (--metadata-file / --metadata-url).")
    if (parsed.ssoUrl === undefined) return yield* invalidInput("sso_url", "sso_url is required (--sso-url), or give the IdP's metadata.")
    if (parsed.certificates === undefined) return yield* invalidInput("certificate", "certificate is required (--certificate-file PATH), or give the IdP's metadata.")
    const connection = yield* (yield* SsoConnections).setSaml({
      actor,
      orgId,
      entityId: parsed.entityId,
      ssoUrl: parsed.ssoUrl,
      certificates: parsed.certificates,
      metadataUrl,
      allowedDomains: domains,
      jitRole: role
    })
    return connectionView(connection)
  })

/** `cli.ts sso idp show`: the organisation's IdP without its secret. 404 `sso_not_configured`. */
export const showIdp = (input: Input) =>
  Effect.gen(function*() {
    const orgId = yield* orgOf(input)
    return connectionView(yield* (yield* SsoConnections).get(orgId))
  })

/** `cli.ts sso idp remove`: single sign-on off for the organisation. 404 `sso_not_configured`. */
export const removeIdp = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const orgId = yield* orgOf(input)
    yield* (yield* SsoConnections).remove({ actor, orgId })
    return { org_id: orgId, removed: true }
  })
