import { Schema } from "effect"
import { route } from "./ApiRoute.ts"
import { Instant, Micros, pageQuery, Usd } from "./common.ts"

const admin = { kind: "portal", abilities: ["ability:admin"] } as const
const noStore = ["Cache-Control"] as const
const nextCursor = Schema.NullOr(Schema.String).annotate({ description: "The `cursor` of the next page; null on the last." })

export const AdminOrganisation = Schema.Struct({
  org_id: Schema.String,
  name: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  created_at: Instant,
  balance_micros: Micros,
  balance_usd: Usd,
  keys_active: Schema.Int,
  members: Schema.Int.annotate({ description: "People who can sign in to it: accounts made there plus members." })
}).annotate({ identifier: "AdminOrganisation" })

export const AdminKey = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  org_name: Schema.String,
  key_prefix: Schema.String,
  name: Schema.NullOr(Schema.String),
  tier: Schema.String,
  status: Schema.Literals(["active", "revoked", "rotated"]),
  permissions: Schema.Array(Schema.String),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  created_at: Instant,
  last_used_at: Schema.NullOr(Instant),
  revoked_at: Schema.NullOr(Instant)
}).annotate({ identifier: "AdminKey", description: "A key's metadata: never the key, never its hash." })

export const AdminChain = Schema.Struct({
  chain_id: Schema.String,
  org_id: Schema.String,
  kind: Schema.Literals(["v2", "v1", "failed"]),
  last_seq: Schema.Int,
  incident: Schema.NullOr(Schema.Struct({
    id: Schema.String,
    seq: Schema.NullOr(Schema.Int),
    reason: Schema.String,
    detected_at: Instant
  })).annotate({ description: "The open incident (chain found broken and not yet repaired), if any." })
}).annotate({ identifier: "AdminChain" })

export const ChainVerifierState = Schema.Struct({
  chains: Schema.Int,
  open_incidents: Schema.Int,
  repaired_incidents: Schema.Int,
  last_pass: Schema.NullOr(Schema.Struct({
    finished_at: Instant,
    full: Schema.Boolean,
    chains: Schema.Int,
    broken: Schema.Int,
    duration_ms: Schema.Int
  })).annotate({ description: "This gateway process's latest verification pass (each node runs its own); null before its first." })
}).annotate({ identifier: "ChainVerifierState" })

const idParam = (name: string, description: string) => ({ name, description, schema: Schema.String })

/** Which organisation a SCIM token command acts on: `org_id`, or `key_prefix` meaning that key's organisation. */
const scimTokenOrg = {
  org_id: Schema.optionalKey(Schema.String.annotate({ description: "The organisation." })),
  key_prefix: Schema.optionalKey(Schema.String.annotate({ description: "Instead of org_id: this gateway key's organisation." }))
}

export const AdminScimToken = Schema.Struct({
  token_id: Schema.String,
  prefix: Schema.String.annotate({ description: "The token's first 12 characters (`scim_` and 7 more), to tell tokens apart." }),
  created_at: Instant,
  last_used_at: Schema.NullOr(Instant).annotate({ description: "When the IdP last authenticated with it (refreshed at most once a minute); null before its first use." }),
  revoked_at: Schema.NullOr(Instant)
}).annotate({ identifier: "AdminScimToken", description: "A SCIM token's metadata: never the token, never its hash." })

export const adminRoutes = [
  route({
    method: "GET", path: "/api/admin/orgs", operationId: "adminListOrganisations", tag: "Admin", summary: "Every organisation, newest first",
    description: "The portal's admin view. Keyset-paged (`limit` 1-200, default 50; `cursor`).",
    auth: admin, query: [...pageQuery, idParam("parent_id", "Only the sub-organisations of this organisation.")],
    responses: [{ status: 200, description: "A page of organisations.", body: Schema.Struct({ organisations: Schema.Array(AdminOrganisation), next_cursor: nextCursor }), headers: noStore }],
    errors: ["invalid_request"]
  }),
  route({
    method: "GET", path: "/api/admin/keys", operationId: "adminListKeys", tag: "Admin", summary: "Every gateway key's metadata, newest first",
    description: "The portal's admin view: prefix, name, organisation, scopes, models, status and dates; never a key or its hash. Keyset-paged.",
    auth: admin,
    query: [
      ...pageQuery,
      idParam("org_id", "Only this organisation's keys."),
      { name: "status", description: "Only keys in this state.", schema: Schema.Literals(["active", "revoked", "rotated"]) }
    ],
    responses: [{ status: 200, description: "A page of keys.", body: Schema.Struct({ keys: Schema.Array(AdminKey), next_cursor: nextCursor }), headers: noStore }],
    errors: ["invalid_request"]
  }),
  route({
    method: "GET", path: "/api/admin/chains", operationId: "adminChainState", tag: "Admin", summary: "The receipt chain verifier's state and the chains, by id",
    description: "Counts and open incidents come from the database (every node); `last_pass` is this process's. Keyset-paged by chain id.",
    auth: admin,
    query: [...pageQuery, { name: "state", description: "`broken`: only chains with an open incident.", schema: Schema.Literals(["all", "broken"]) }],
    responses: [{
      status: 200, description: "The summary and a page of chains.",
      body: Schema.Struct({ summary: ChainVerifierState, chains: Schema.Array(AdminChain), next_cursor: nextCursor }), headers: noStore
    }],
    errors: ["invalid_request"]
  }),
  route({
    method: "POST", path: "/api/admin/sso/scim-tokens", operationId: "adminIssueScimToken", tag: "Admin",
    summary: "Issue a SCIM bearer token for an organisation's identity provider (shown once)",
    description: "The IdP provisions the organisation's people and groups at `PUBLIC_BASE_URL/scim/v2` with it (docs/sso.md, SCIM). " +
      "Only its SHA-256 is stored; the answer is the one time the token is shown. Recorded in the audit log (`scim.token_issued`).",
    auth: admin,
    requestBody: Schema.Struct(scimTokenOrg),
    responses: [{
      status: 200, description: "The token, once.", headers: noStore,
      body: Schema.Struct({
        token_id: Schema.String,
        token: Schema.String.annotate({ description: "`scim_` and 43 base64url characters (256 random bits)." }),
        org_id: Schema.String,
        scim_base_url: Schema.String
      })
    }],
    errors: ["invalid_request", "not_found"]
  }),
  route({
    method: "GET", path: "/api/admin/sso/scim-tokens", operationId: "adminListScimTokens", tag: "Admin",
    summary: "An organisation's SCIM tokens, revoked ones included (ids, prefixes and dates, never a token)",
    auth: admin,
    query: [idParam("org_id", "The organisation."), idParam("key_prefix", "Instead of org_id: this gateway key's organisation.")],
    responses: [{ status: 200, description: "Oldest first.", body: Schema.Struct({ org_id: Schema.String, tokens: Schema.Array(AdminScimToken) }), headers: noStore }],
    errors: ["invalid_request", "not_found"]
  }),
  route({
    method: "POST", path: "/api/admin/sso/scim-tokens/revoke", operationId: "adminRevokeScimToken", tag: "Admin",
    summary: "Revoke a SCIM token: the IdP's next request with it is refused",
    description: "Recorded in the audit log (`scim.token_revoked`). 404 `not_found` when the id is not an active token of the organisation.",
    auth: admin,
    requestBody: Schema.Struct({ ...scimTokenOrg, token_id: Schema.String.annotate({ description: "The token's id (`sct_...`)." }) }),
    responses: [{ status: 200, description: "Revoked.", body: Schema.Struct({ token_id: Schema.String, org_id: Schema.String, revoked: Schema.Literal(true) }) }],
    errors: ["invalid_request", "not_found"]
  })
]
