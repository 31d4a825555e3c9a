import { Schema } from "effect"
import { ROLES } from "../../../services/Accounts.ts"
import { route } from "./ApiRoute.ts"
import { Instant, optionalText } from "./common.ts"

const PASSWORD_MAX = 256
const Email = Schema.String.check(Schema.isMaxLength(254)).annotate({ format: "email" })
const requiredEmail = Email
const Password = Schema.String.check(Schema.isMaxLength(PASSWORD_MAX)).annotate({ description: "At least 10 characters." })

const Verified = Schema.Struct({
  verified: Schema.Literal(true),
  account_id: Schema.String,
  org_id: Schema.String,
  trial_credited: Schema.Boolean,
  trial_credit_micros: Schema.Int
})

const PortalSession = Schema.Struct({
  account_id: Schema.String,
  org_id: Schema.String,
  role: Schema.String,
  abilities: Schema.Array(Schema.String),
  csrf_token: Schema.String.annotate({ description: "Echo it in `X-CSRF-Token` on every write made with the session cookie." }),
  expires_at: Instant
})

const Account = Schema.Struct({
  account_id: Schema.String,
  email: Schema.NullOr(Schema.String),
  email_verified: Schema.Boolean,
  home_org_id: Schema.NullOr(Schema.String),
  org_id: Schema.String,
  role: Schema.String,
  abilities: Schema.Array(Schema.String),
  memberships: Schema.Array(Schema.Struct({ org_id: Schema.String, role: Schema.String }))
})

const SelfServiceKey = Schema.Struct({
  api_key: Schema.String,
  key_prefix: Schema.String,
  tier: Schema.Literal("free"),
  limits: Schema.Struct({ rate_limit_rpm: Schema.Int, on_device: Schema.String, relay: Schema.String }),
  warning: Schema.String
})

const DemoKey = Schema.Struct({
  api_key: Schema.String,
  key_prefix: Schema.String,
  tier: Schema.String,
  balance_usd: Schema.String,
  expires_at: Instant,
  limits: Schema.Struct({ relay_only: Schema.String, receipts: Schema.String }),
  warning: Schema.String
})

const writeOrgs = { kind: "portal", abilities: ["abilities:write"] } as const

export const accountRoutes = [
  route({
    method: "POST", path: "/api/v1/accounts", operationId: "signUp", tag: "Accounts", summary: "Sign up: an account, its organisation, and a verification e-mail",
    auth: { kind: "none" },
    requestBody: Schema.Struct({ email: requiredEmail, password: Password, organisation_name: optionalText(100) }),
    responses: [{
      status: 201, description: "Created, unverified. `verification_email_sent` is false when the mail server did not take the link: the account exists and the link is asked for again with `POST /api/v1/account/verification`.",
      body: Schema.Struct({ account_id: Schema.String, org_id: Schema.String, email_verified: Schema.Literal(false), verification_email_sent: Schema.Boolean, verification: Schema.String })
    }],
    errors: ["account_exists", "rate_limited"]
  }),
  route({
    method: "POST", path: "/api/v1/account/verification", operationId: "resendVerification", tag: "Accounts", summary: "Send the verification e-mail again",
    auth: { kind: "none" }, requestBody: Schema.Struct({ email: requiredEmail }),
    responses: [{ status: 202, description: "The same answer whether or not the address has an unverified account.", body: Schema.Struct({ status: Schema.Literal("sent_if_unverified") }) }],
    errors: ["rate_limited", "mail_unavailable"]
  }),
  route({
    method: "GET", path: "/api/v1/account/verify", operationId: "verifyEmail", tag: "Accounts", summary: "Follow the e-mail verification link",
    auth: { kind: "none" }, query: [{ name: "token", description: "The link's token.", schema: Schema.String, required: true }],
    responses: [
      { status: 200, description: "Verified; the trial credit is granted once.", body: Verified, headers: ["Cache-Control"] },
      { status: 303, description: "A browser (`Accept: text/html`) on a gateway with the portal built: sent to `/portal/verify?token=...`, which verifies with the POST below; the token is not used by this answer.", headers: ["Location", "Cache-Control"] }
    ],
    errors: ["verification_link_invalid", "verification_link_used", "verification_link_expired"]
  }),
  route({
    method: "POST", path: "/api/v1/account/verify", operationId: "verifyEmailWithPassword", tag: "Accounts", summary: "Verify with the link's token and set a password",
    auth: { kind: "none" },
    requestBody: Schema.Struct({ token: Schema.String.check(Schema.isMaxLength(100)), password: Schema.optionalKey(Schema.NullOr(Password)) }),
    responses: [{ status: 200, description: "Verified.", body: Verified, headers: ["Cache-Control"] }],
    errors: ["verification_link_invalid", "verification_link_used", "verification_link_expired"]
  }),
  route({
    method: "GET", path: "/api/v1/account", operationId: "getAccount", tag: "Accounts", summary: "The signed-in account",
    auth: { kind: "session" }, responses: [{ status: 200, description: "The account and its memberships.", body: Account, headers: ["Cache-Control"] }]
  }),
  route({
    method: "DELETE", path: "/api/v1/account", operationId: "eraseOwnAccount", tag: "Accounts", summary: "Erase the signed-in account",
    auth: { kind: "session" }, responses: [{ status: 204, description: "Erased; the session cookies are expired.", headers: ["Set-Cookie"] }]
  }),
  route({
    method: "DELETE", path: "/api/v1/accounts/:id", operationId: "eraseAccount", tag: "Accounts", summary: "Erase a user's account (operator)",
    auth: { kind: "portal", abilities: ["ability:admin"] }, pathParameters: { id: "The account id." },
    responses: [{ status: 204, description: "Erased." }], errors: ["not_found"]
  }),
  route({
    method: "POST", path: "/api/v1/orgs", operationId: "createOrganisation", tag: "Accounts", summary: "Create a sub-organisation (membership-managed)",
    auth: writeOrgs, requestBody: Schema.Struct({ name: Schema.String.check(Schema.isMaxLength(100)) }),
    responses: [{ status: 201, description: "Created.", body: Schema.Struct({ org_id: Schema.String, parent_id: Schema.String, name: Schema.String }) }],
    errors: ["nested_sub_organisation"]
  }),
  route({
    method: "POST", path: "/api/v1/orgs/:id/members", operationId: "addMember", tag: "Accounts", summary: "Add a person to an organisation by e-mail",
    auth: writeOrgs, pathParameters: { id: "The organisation id." },
    requestBody: Schema.Struct({ email: requiredEmail, role: Schema.optionalKey(Schema.NullOr(Schema.Literals(ROLES))) }),
    responses: [{
      status: 201,
      description:
        "Added (an account is created when the address has none, and its verification link is mailed). `verification_email_sent` is false when no link was due (an existing account) or the mail server did not take it: the account and membership exist, and `verification` says to ask for the link again with `POST /api/v1/account/verification`.",
      body: Schema.Struct({
        account_id: Schema.String,
        org_id: Schema.String,
        role: Schema.String,
        created: Schema.Boolean,
        verification_email_sent: Schema.Boolean,
        verification: Schema.optionalKey(Schema.String)
      })
    }],
    errors: ["not_found", "already_member"]
  }),
  route({
    method: "POST", path: "/api/v1/portal/login", operationId: "portalLogin", tag: "Accounts", summary: "Sign in to the portal (session cookie + CSRF token)",
    auth: { kind: "none" },
    requestBody: Schema.Struct({ email: requiredEmail, password: Password, org_id: optionalText(100) }),
    responses: [{ status: 200, description: "Signed in; `Set-Cookie` carries the session and CSRF cookies.", body: PortalSession, headers: ["Set-Cookie", "Cache-Control"] }],
    errors: ["invalid_credentials", "not_a_member", "rate_limited"]
  }),
  route({
    method: "GET", path: "/api/v1/portal/sso/:org_id/start", operationId: "ssoStart", tag: "Accounts",
    summary: "Sign in to the portal through the organisation's identity provider (single sign-on, beta)",
    description: "Redirects the browser to the IdP (OIDC authorization code flow with PKCE, or a SAML AuthnRequest) and sets the `pr_sso` cookie that ties the IdP's answer to this browser (docs/sso.md).",
    auth: { kind: "none" }, pathParameters: { org_id: "The organisation whose identity provider signs the person in." },
    responses: [{ status: 302, description: "To the identity provider; `Set-Cookie` carries `pr_sso` (10 minutes).", headers: ["Location", "Set-Cookie", "Cache-Control"] }],
    errors: ["sso_not_configured"]
  }),
  route({
    method: "GET", path: "/api/v1/portal/sso/:org_id/oidc/callback", operationId: "ssoOidcCallback", tag: "Accounts",
    summary: "The OpenID provider's redirect back (the redirect URI to register at the IdP)",
    description: "Exchanges the code (PKCE), checks the ID token's signature, issuer, audience, nonce and expiry, joins the person to the organisation just in time, and signs them in (docs/sso.md).",
    auth: { kind: "none" }, pathParameters: { org_id: "The organisation." },
    query: [
      { name: "code", description: "The authorization code.", schema: Schema.String },
      { name: "state", description: "The state the sign-in sent.", schema: Schema.String }
    ],
    responses: [{ status: 303, description: "Signed in: to /portal/; `Set-Cookie` carries the session and CSRF cookies.", headers: ["Location", "Set-Cookie", "Cache-Control"] }],
    errors: ["sso_rejected", "sso_not_configured"]
  }),
  route({
    method: "POST", path: "/api/v1/portal/sso/:org_id/saml/acs", operationId: "ssoSamlAcs", tag: "Accounts",
    summary: "The SAML assertion consumer service (HTTP-POST binding; the ACS URL to give the IdP)",
    description: "Checks the assertion's signature against the IdP's certificates, its issuer, audience, NotBefore/NotOnOrAfter and InResponseTo (the request this browser's sign-in sent, accepted once), joins the person just in time and signs them in (docs/sso.md).",
    auth: { kind: "none" }, pathParameters: { org_id: "The organisation." },
    rawRequestBody: { mediaType: "application/x-www-form-urlencoded", schema: Schema.String, description: "The IdP's form: `SAMLResponse` (base64) and `RelayState`." },
    responses: [{ status: 303, description: "Signed in: to /portal/; `Set-Cookie` carries the session and CSRF cookies.", headers: ["Location", "Set-Cookie", "Cache-Control"] }],
    errors: ["sso_rejected", "sso_not_configured"]
  }),
  route({
    method: "GET", path: "/api/v1/portal/sso/:org_id/saml/metadata", operationId: "ssoSamlMetadata", tag: "Accounts",
    summary: "The gateway's SAML service provider metadata for the organisation (entity id, ACS URL)",
    auth: { kind: "none" }, pathParameters: { org_id: "The organisation (its IdP must be a SAML one)." },
    responses: [{ status: 200, description: "SP metadata XML.", content: { mediaType: "application/samlmetadata+xml", schema: Schema.String } }],
    errors: ["sso_not_configured"]
  }),
  route({
    method: "POST", path: "/api/v1/portal/logout", operationId: "portalLogout", tag: "Accounts", summary: "Sign out",
    auth: { kind: "none" }, responses: [{ status: 204, description: "Signed out; the cookies are expired.", headers: ["Set-Cookie"] }],
    errors: ["csrf_failed"]
  }),
  route({
    method: "POST", path: "/api/v1/self-service/key", operationId: "issueSelfServiceKey", tag: "Keys", summary: "A free-tier key for anyone (per-network limits)",
    auth: { kind: "none" },
    requestBody: Schema.Struct({ email: optionalText(254, "An e-mail address: its verification is worth the trial credit."), name: optionalText(100) }),
    responses: [{ status: 201, description: "The key, shown once.", body: SelfServiceKey, headers: ["Cache-Control"] }],
    errors: ["rate_limited", "account_exists"]
  }),
  route({
    method: "POST", path: "/api/v1/demo/key", operationId: "issueDemoKey", tag: "Keys", summary: "An anonymous demo key: $2, 24 hours, relay only, no receipts",
    auth: { kind: "none" }, requestBody: Schema.Struct({}),
    responses: [{ status: 201, description: "The key, shown once.", body: DemoKey, headers: ["Cache-Control"] }],
    errors: ["rate_limited"]
  })
]
