import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Single sign-on (docs/sso.md): one identity provider per organisation, set by the operator (`cli.ts sso idp ...`);
 * the sign-ins under way (single use, short-lived); and which IdP subject is which account.
 *
 * - `sso_connections`: an OIDC provider (issuer, client id, the client secret sealed under the KEK, bound to
 *   `sso-oidc:<org>`) or a SAML 2.0 one (entity id, sign-in URL, signing certificates in PEM). `allowed_domains` are
 *   the e-mail domains the IdP may sign in; `jit_role` is the role of a person it signs in for the first time.
 * - `sso_login_attempts`: keyed by the SHA-256 of the random value in the browser's `pr_sso` cookie, so a sign-in
 *   finishes only in the browser that started it; deleted when used.
 * - `sso_identities`: the IdP's stable subject (OIDC `sub`, SAML NameID) -> the account it signed in.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE sso_connections (
    org_id text PRIMARY KEY REFERENCES organisations(id),
    protocol text NOT NULL CHECK (protocol IN ('oidc', 'saml')),
    allowed_domains jsonb NOT NULL,
    jit_role text NOT NULL CHECK (jit_role IN ('owner', 'admin', 'member')),
    oidc_issuer text,
    oidc_client_id text,
    oidc_client_secret_enc text,
    saml_entity_id text,
    saml_sso_url text,
    saml_certificates jsonb,
    saml_metadata_url text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (protocol <> 'oidc' OR (oidc_issuer IS NOT NULL AND oidc_client_id IS NOT NULL AND oidc_client_secret_enc IS NOT NULL)),
    CHECK (protocol <> 'saml' OR (saml_entity_id IS NOT NULL AND saml_sso_url IS NOT NULL AND saml_certificates IS NOT NULL))
  )`
  yield* sql`CREATE TABLE sso_login_attempts (
    cookie_hash text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    protocol text NOT NULL CHECK (protocol IN ('oidc', 'saml')),
    state text,
    nonce text,
    code_verifier text,
    request_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX sso_login_attempts_expiry ON sso_login_attempts (expires_at)`
  yield* sql`CREATE TABLE sso_identities (
    org_id text NOT NULL REFERENCES organisations(id),
    subject text NOT NULL,
    account_id text NOT NULL REFERENCES accounts(id),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, subject)
  )`
})
