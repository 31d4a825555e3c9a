import { Schema } from "effect"
import { route } from "./ApiRoute.ts"
import { AnyObject } from "./common.ts"

const Check = Schema.Union([
  Schema.Struct({ status: Schema.Literal("ok"), latency_ms: Schema.Number }),
  Schema.Struct({ status: Schema.Literals(["fail", "not_configured"]), detail: Schema.String })
])
const Readiness = Schema.Struct({ status: Schema.Literals(["ready", "not_ready"]), checks: Schema.Struct({ database: Check, redis: Check }) })

const admin = { kind: "portal", abilities: ["ability:admin"] } as const
const adminPost = (path: string, operationId: string, summary: string, errors: ReadonlyArray<string> = []) =>
  route({
    method: "POST", path, operationId, tag: "Admin", summary, auth: admin,
    requestBody: AnyObject.annotate({ description: "The same fields as the CLI command's flags (docs/configuration.md)." }),
    responses: [{ status: 200, description: "What the CLI prints.", body: AnyObject }],
    errors: ["invalid_request", ...errors]
  })

export const operationRoutes = [
  route({
    method: "GET", path: "/healthz", operationId: "health", tag: "Operations", summary: "Liveness: the process serves HTTP",
    auth: { kind: "none" }, responses: [{ status: 200, description: "Alive.", body: Schema.Struct({ status: Schema.Literal("ok") }) }]
  }),
  route({
    method: "GET", path: "/readyz", operationId: "ready", tag: "Operations", summary: "Readiness: the database (and Redis when configured) answer within 2 s",
    auth: { kind: "none" },
    responses: [
      { status: 200, description: "Ready.", body: Readiness },
      { status: 503, description: "Not ready: the failed check is named.", body: Readiness }
    ]
  }),
  route({
    method: "GET", path: "/metrics", operationId: "metrics", tag: "Operations", summary: "Prometheus metrics of this process (operators only)",
    description: "Request counts by route template, method and status class; 5xx counts; a latency histogram; open wallet holds and the webhook backlog. " +
      "With METRICS_TOKEN_FILE set, only `Authorization: Bearer <that token>` may read it; without it, only a caller on the same host that did not come " +
      "through a proxy (loopback peer, no X-Forwarded-For). Anyone else gets 404 `not_found`.",
    auth: { kind: "none" },
    responses: [{ status: 200, description: "Prometheus text exposition format 0.0.4.", content: { mediaType: "text/plain", schema: Schema.String } }],
    errors: ["not_found"]
  }),
  route({
    method: "GET", path: "/api/v1/openapi.json", operationId: "openApiDocument", tag: "Operations", summary: "This document",
    auth: { kind: "none" }, responses: [{ status: 200, description: "OpenAPI 3.1.", body: AnyObject, headers: ["Cache-Control"] }]
  }),
  route({
    method: "GET", path: "/docs/api", operationId: "apiReference", tag: "Operations", summary: "This document rendered for people",
    auth: { kind: "none" }, responses: [{ status: 200, description: "An HTML page.", content: { mediaType: "text/html", schema: Schema.String } }]
  }),
  route({
    method: "GET", path: "/docs/api/reference.js", operationId: "apiReferenceScript", tag: "Operations", summary: "The reference page's renderer script",
    auth: { kind: "none" }, responses: [{ status: 200, description: "JavaScript.", content: { mediaType: "text/javascript", schema: Schema.String }, headers: ["Cache-Control"] }]
  }),
  route({
    method: "GET", path: "/docs/api/reference.css", operationId: "apiReferenceStyles", tag: "Operations", summary: "The reference page's renderer styles",
    auth: { kind: "none" }, responses: [{ status: 200, description: "CSS.", content: { mediaType: "text/css", schema: Schema.String }, headers: ["Cache-Control"] }]
  }),
  route({
    method: "GET", path: "/docs/api/start.js", operationId: "apiReferenceStart", tag: "Operations", summary: "The reference page's start-up script (points the renderer at this document)",
    auth: { kind: "none" }, responses: [{ status: 200, description: "JavaScript.", content: { mediaType: "text/javascript", schema: Schema.String }, headers: ["Cache-Control"] }]
  }),
  route({
    method: "GET", path: "/.well-known/openid-configuration", operationId: "openIdConfiguration", tag: "Operations", summary: "OpenID Connect discovery (the gateway as identity provider; the `/oauth/*` endpoints it lists)",
    auth: { kind: "none" }, responses: [{ status: 200, description: "The discovery document.", body: AnyObject }]
  }),
  adminPost("/api/admin/orgs", "adminCreateOrganisation", "Create an organisation"),
  adminPost("/api/admin/portal-tokens", "adminCreatePortalToken", "Create a portal token"),
  adminPost("/api/admin/wallets/credit", "adminCreditWallet", "Credit a wallet"),
  adminPost("/api/admin/routing/fallbacks", "adminSetRoutingFallbacks", "Set an organisation's ordered fallback models"),
  adminPost("/api/admin/keys/revoke", "adminRevokeKey", "Revoke a key by prefix or an organisation's keys", ["ambiguous_prefix", "not_found"]),
  adminPost("/api/admin/licences", "adminCreateLicence", "Create a licence code"),
  adminPost("/api/admin/oidc/clients", "adminCreateOidcClient", "Register an OpenID Connect client"),
  adminPost("/api/admin/accounts/operator", "adminSetOperator", "Grant or revoke an account's operator flag (its portal sessions then hold ability:admin)", ["not_found", "email_not_verified"]),
  adminPost("/api/admin/sso/oidc", "adminSetSsoOidc", "Set an organisation's OpenID Connect identity provider (single sign-on, beta)", ["not_found"]),
  adminPost("/api/admin/sso/saml", "adminSetSsoSaml", "Set an organisation's SAML 2.0 identity provider (single sign-on, beta)", ["not_found"]),
  adminPost("/api/admin/sso/remove", "adminRemoveSso", "Turn single sign-on off for an organisation", ["sso_not_configured"]),
  route({
    method: "GET", path: "/api/admin/sso", operationId: "adminShowSso", tag: "Admin", summary: "An organisation's identity provider (never its client secret)",
    auth: admin,
    query: [
      { name: "org_id", description: "The organisation.", schema: Schema.String },
      { name: "key_prefix", description: "Instead of org_id: this key's organisation.", schema: Schema.String }
    ],
    responses: [{ status: 200, description: "What `cli.ts sso idp show` prints.", body: AnyObject, headers: ["Cache-Control"] }],
    errors: ["invalid_request", "sso_not_configured"]
  }),
  adminPost("/api/admin/retention/apply", "adminApplyRetention", "Drop receipts, usage and finished deliveries older than the retention period"),
  route({
    method: "GET", path: "/api/admin/mail/outbox", operationId: "adminMailOutbox", tag: "Admin", summary: "The newest development mails (no SMTP_URL): verification links for newcomers",
    auth: admin,
    query: [
      { name: "to", description: "Only mails to this address (case-insensitive).", schema: Schema.String },
      { name: "limit", description: "How many, newest first (1-100, default 10).", schema: Schema.String }
    ],
    responses: [{ status: 200, description: "`{ transport, mails: [{ id, to, subject, text, created_at }] }`.", body: AnyObject, headers: ["Cache-Control"] }],
    errors: ["invalid_request"]
  }),
  route({
    method: "GET", path: "/api/admin/ledger/check", operationId: "adminLedgerCheck", tag: "Admin", summary: "Check the ledger against the wallets",
    auth: admin, responses: [{ status: 200, description: "The report.", body: AnyObject }]
  })
]
