import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { Role } from "../../services/Accounts.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"
import { type OidcConnection, type SamlConnection, type SsoConnection, SsoConnections, SsoNotConfigured } from "../../services/SsoConnections.ts"
import { OrganisationNotFound } from "../../services/Wallets.ts"
import { appendAudit } from "./audit.ts"
import { jsonColumn } from "./jsonColumn.ts"

/** Additional data binding a sealed OIDC client secret to its organisation (a secret copied to another row fails to open). */
export const ssoSecretContext = (orgId: string) => `sso-oidc:${orgId}`

interface Row {
  readonly org_id: string
  readonly protocol: "oidc" | "saml"
  readonly allowed_domains: unknown
  readonly jit_role: Role
  readonly oidc_issuer: string | null
  readonly oidc_client_id: string | null
  readonly saml_entity_id: string | null
  readonly saml_sso_url: string | null
  readonly saml_certificates: unknown
  readonly saml_metadata_url: string | null
  readonly updated_at: Date | string
}

const COLUMNS = "org_id, protocol, allowed_domains, jit_role, oidc_issuer, oidc_client_id, saml_entity_id, saml_sso_url, saml_certificates, saml_metadata_url, updated_at"

const toConnection = (r: Row): SsoConnection => {
  const common = {
    orgId: r.org_id,
    allowedDomains: jsonColumn<ReadonlyArray<string>>(r.allowed_domains),
    jitRole: r.jit_role,
    updatedAt: new Date(r.updated_at)
  }
  return r.protocol === "oidc"
    ? { ...common, protocol: "oidc", issuer: r.oidc_issuer!, clientId: r.oidc_client_id! } satisfies OidcConnection
    : {
      ...common,
      protocol: "saml",
      entityId: r.saml_entity_id!,
      ssoUrl: r.saml_sso_url!,
      certificates: jsonColumn<ReadonlyArray<string>>(r.saml_certificates),
      metadataUrl: r.saml_metadata_url ?? undefined
    } satisfies SamlConnection
}

export const SsoConnectionsPg = Layer.effect(
  SsoConnections,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const encryption = yield* KeyEncryption

    /** Upserts the whole row (the other protocol's columns cleared) and audits it, in one transaction. */
    const put = (actor: string, orgId: string, values: Record<string, unknown>, details: Record<string, unknown>) =>
      sql.withTransaction(Effect.gen(function*() {
        const org = yield* sql`SELECT 1 FROM organisations WHERE id = ${orgId} FOR UPDATE`
        if (org.length === 0) return yield* new OrganisationNotFound({ orgId })
        const row = {
          org_id: orgId,
          oidc_issuer: null,
          oidc_client_id: null,
          oidc_client_secret_enc: null,
          saml_entity_id: null,
          saml_sso_url: null,
          saml_certificates: null,
          saml_metadata_url: null,
          ...values
        }
        const rows = yield* sql<Row>`
          INSERT INTO sso_connections ${sql.insert(row)}
          ON CONFLICT (org_id) DO UPDATE SET
            protocol = EXCLUDED.protocol, allowed_domains = EXCLUDED.allowed_domains, jit_role = EXCLUDED.jit_role,
            oidc_issuer = EXCLUDED.oidc_issuer, oidc_client_id = EXCLUDED.oidc_client_id,
            oidc_client_secret_enc = EXCLUDED.oidc_client_secret_enc, saml_entity_id = EXCLUDED.saml_entity_id,
            saml_sso_url = EXCLUDED.saml_sso_url, saml_certificates = EXCLUDED.saml_certificates,
            saml_metadata_url = EXCLUDED.saml_metadata_url, updated_at = now()
          RETURNING ${sql.literal(COLUMNS)}`
        yield* appendAudit(sql, { actor, action: "sso.configured", target: orgId, orgId, details })
        return toConnection(rows[0]!)
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const get = (orgId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT ${sql.literal(COLUMNS)} FROM sso_connections WHERE org_id = ${orgId}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new SsoNotConfigured({ orgId })
        return toConnection(rows[0]!)
      })

    return SsoConnections.of({
      setOidc: (input) =>
        Effect.gen(function*() {
          const sealed = yield* encryption.seal(Redacted.value(input.clientSecret), ssoSecretContext(input.orgId))
          const connection = yield* put(input.actor, input.orgId, {
            protocol: "oidc",
            allowed_domains: JSON.stringify(input.allowedDomains),
            jit_role: input.jitRole,
            oidc_issuer: input.issuer,
            oidc_client_id: input.clientId,
            oidc_client_secret_enc: sealed
          }, { protocol: "oidc", issuer: input.issuer, client_id: input.clientId, allowed_domains: input.allowedDomains, jit_role: input.jitRole })
          return connection as OidcConnection
        }),
      setSaml: (input) =>
        Effect.map(
          put(input.actor, input.orgId, {
            protocol: "saml",
            allowed_domains: JSON.stringify(input.allowedDomains),
            jit_role: input.jitRole,
            saml_entity_id: input.entityId,
            saml_sso_url: input.ssoUrl,
            saml_certificates: JSON.stringify(input.certificates),
            saml_metadata_url: input.metadataUrl ?? null
          }, {
            protocol: "saml",
            entity_id: input.entityId,
            sso_url: input.ssoUrl,
            certificates: input.certificates.length,
            metadata_url: input.metadataUrl ?? null,
            allowed_domains: input.allowedDomains,
            jit_role: input.jitRole
          }),
          (c) => c as SamlConnection
        ),
      get,
      oidcClientSecret: (orgId) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ sealed: string | null }>`
            SELECT oidc_client_secret_enc AS sealed FROM sso_connections WHERE org_id = ${orgId}`.pipe(Effect.orDie)
          const sealed = rows[0]?.sealed
          if (sealed === undefined || sealed === null) return yield* new SsoNotConfigured({ orgId })
          return Redacted.make(yield* encryption.open(sealed, ssoSecretContext(orgId)))
        }),
      remove: ({ actor, orgId }) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ protocol: string }>`DELETE FROM sso_connections WHERE org_id = ${orgId} RETURNING protocol`
          if (rows.length === 0) return yield* new SsoNotConfigured({ orgId })
          yield* sql`DELETE FROM sso_login_attempts WHERE org_id = ${orgId}`
          yield* appendAudit(sql, { actor, action: "sso.removed", target: orgId, orgId, details: { protocol: rows[0]!.protocol } })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  })
)
