import { Schema } from "effect"
import { route } from "./ApiRoute.ts"
import { Instant, Micros, pageQuery, Usage, Usd } from "./common.ts"

const read = { kind: "portal", abilities: ["ability:billing.read"] } as const
const write = { kind: "portal", abilities: ["ability:billing.write"] } as const

export const TopupRequest = Schema.Struct({
  amount_usd: Schema.String.check(Schema.isPattern(/^\d+(?:\.\d{1,2})?$/)).annotate({
    description: "Whole cents as a decimal string, within TOPUP_MIN_USD and TOPUP_MAX_USD.", examples: ["10.00"]
  })
})
const Checkout = Schema.Struct({
  checkout_id: Schema.String,
  checkout_url: Schema.String,
  amount_micros: Micros,
  amount_usd: Usd,
  status: Schema.String,
  provider: Schema.String
})
const RedeemRequest = Schema.Struct({ code: Schema.String.annotate({ description: "The licence code." }) })
const Redeemed = Schema.Struct({ licence_id: Schema.String, amount_micros: Micros, amount_usd: Usd, balance_micros: Micros, balance_usd: Usd })
const Ledger = Schema.Struct({
  entries: Schema.Array(Schema.Struct({
    id: Schema.String,
    kind: Schema.String,
    amount_micros: Micros,
    amount_usd: Usd,
    reference: Schema.NullOr(Schema.String),
    usage_id: Schema.NullOr(Schema.String),
    created_at: Schema.String
  })),
  next_cursor: Schema.NullOr(Schema.String)
})
const usageQuery = [
  ...pageQuery,
  { name: "from", description: "ISO 8601 start (default: 30 days before `to`).", schema: Schema.String },
  { name: "to", description: "ISO 8601 end (default: now).", schema: Schema.String }
]

const topup = (path: string, operationId: string, deprecated?: string) =>
  route({
    method: "POST", path, operationId, tag: "Billing", summary: "Start a top-up checkout",
    auth: write, requestHeaders: ["Idempotency-Key"], requestBody: TopupRequest,
    responses: [{ status: 201, description: "The checkout to complete.", body: Checkout, headers: ["Cache-Control", "X-Service-Idempotent-Replay"] }],
    errors: ["payments_not_configured", "payment_provider_error"],
    ...(deprecated === undefined ? {} : { deprecated })
  })
const redeem = (path: string, operationId: string, deprecated?: string) =>
  route({
    method: "POST", path, operationId, tag: "Billing", summary: "Redeem a licence code",
    auth: write, requestHeaders: ["Idempotency-Key"], requestBody: RedeemRequest,
    responses: [{ status: 200, description: "Credited.", body: Redeemed, headers: ["X-Service-Idempotent-Replay"] }],
    errors: ["invalid_licence", "licence_already_redeemed"],
    ...(deprecated === undefined ? {} : { deprecated })
  })

export const billingRoutes = [
  route({
    method: "GET", path: "/api/v1/billing/balance", operationId: "getBalance", tag: "Billing", summary: "The organisation's balance",
    auth: read, responses: [{ status: 200, description: "The balance.", body: Schema.Struct({ balance_micros: Micros, balance_usd: Usd }) }]
  }),
  topup("/api/v1/billing/topup", "createTopup"),
  topup("/api/billing/topup", "createTopupAlias", "Alias of POST /api/v1/billing/topup."),
  topup("/api/billing/checkout/topup", "createTopupCheckoutAlias", "Alias of POST /api/v1/billing/topup."),
  route({
    method: "POST", path: "/api/v1/billing/webhooks/stripe", operationId: "stripeWebhook", tag: "Billing", summary: "Stripe's event callback",
    auth: { kind: "stripeSignature" }, requestHeaders: ["Stripe-Signature"],
    rawRequestBody: { mediaType: "application/json", schema: Schema.Record(Schema.String, Schema.Unknown), description: "Stripe's event, verified over its exact bytes." },
    responses: [{ status: 200, description: "Received.", body: Schema.Struct({ received: Schema.Literal(true), type: Schema.String, credited: Schema.Boolean }) }],
    errors: ["invalid_signature"]
  }),
  route({
    method: "POST", path: "/api/v1/billing/dev/checkouts/:id/complete", operationId: "completeDevCheckout", tag: "Billing", summary: "Complete a checkout of the development payment provider",
    auth: write, pathParameters: { id: "The checkout id." },
    responses: [{ status: 200, description: "Completed.", body: Schema.Struct({ checkout_id: Schema.String, status: Schema.Literal("completed"), credited: Schema.Boolean }) }],
    errors: ["not_found", "payments_not_configured"]
  }),
  redeem("/api/v1/billing/redeem-license", "redeemLicence"),
  redeem("/api/billing/redeem-license", "redeemLicenceAlias", "Alias of POST /api/v1/billing/redeem-license."),
  route({
    method: "GET", path: "/api/v1/billing/ledger", operationId: "getLedger", tag: "Billing", summary: "The wallet's ledger",
    auth: read, query: pageQuery, responses: [{ status: 200, description: "A page, newest first.", body: Ledger }]
  }),
  route({
    method: "GET", path: "/api/v1/billing/usage", operationId: "getUsage", tag: "Billing", summary: "Usage: daily totals and records",
    auth: read, query: usageQuery, responses: [{ status: 200, description: "Daily totals and a page of records.", body: Usage }]
  }),
  route({
    method: "POST", path: "/api/v1/orgs/sub", operationId: "createSubOrganisation", tag: "Billing", summary: "Partner mode: create a sub-organisation with its own wallet",
    auth: { kind: "portal", abilities: ["abilities:write"] }, requestBody: Schema.Struct({ name: Schema.String.check(Schema.isMaxLength(200)) }),
    responses: [{ status: 201, description: "Created.", body: Schema.Struct({ org_id: Schema.String, parent_id: Schema.String, name: Schema.String, balance_micros: Micros, balance_usd: Usd }) }],
    errors: ["nested_sub_organisation"]
  }),
  route({
    method: "GET", path: "/api/v1/orgs/sub", operationId: "listSubOrganisations", tag: "Billing", summary: "Partner mode: the sub-organisations and their balances",
    auth: read,
    responses: [{ status: 200, description: "The sub-organisations.", body: Schema.Struct({ organisations: Schema.Array(Schema.Struct({ org_id: Schema.String, name: Schema.String, balance_micros: Micros, balance_usd: Usd, created_at: Schema.String })) }) }]
  }),
  route({
    method: "GET", path: "/api/v1/orgs/sub/:id/usage", operationId: "getSubOrganisationUsage", tag: "Billing", summary: "Partner mode: a sub-organisation's usage",
    auth: read, pathParameters: { id: "The sub-organisation id." }, query: usageQuery,
    responses: [{ status: 200, description: "Daily totals and a page of records.", body: Usage }],
    errors: ["not_found"]
  }),
  route({
    method: "PUT", path: "/api/v1/byok/:provider", operationId: "putByokKey", tag: "Billing", summary: "Store the organisation's own key for a provider (BYOK)",
    auth: { kind: "portal", abilities: ["ability:byok.write"] }, pathParameters: { provider: "A provider slug of the catalogue." },
    requestBody: Schema.Struct({
      api_key: Schema.optionalKey(Schema.String.annotate({
        description: "The provider key: 8 to 4096 visible ASCII characters; surrounding whitespace is removed. Required, except for aws-bedrock given an AWS key pair instead."
      })),
      aws_access_key_id: Schema.optionalKey(Schema.String.annotate({ description: "aws-bedrock only, instead of api_key: the access key id (16 to 128 upper-case letters and digits)." })),
      aws_secret_access_key: Schema.optionalKey(Schema.String.annotate({ description: "aws-bedrock only: the secret access key (16 to 128 visible ASCII characters)." })),
      aws_session_token: Schema.optionalKey(Schema.String.annotate({ description: "aws-bedrock only, optional: an STS session token of temporary credentials (up to 4096 visible ASCII characters)." })),
      region: Schema.optionalKey(Schema.String.annotate({ description: "aws-bedrock only: the AWS region to call (e.g. us-east-1).", examples: ["us-east-1"] }))
    }),
    responses: [{ status: 200, description: "Stored (encrypted); only the last 4 characters are shown.", body: Schema.Struct({ provider: Schema.String, last4: Schema.String, created_at: Instant }), headers: ["Cache-Control"] }],
    errors: ["not_found"]
  }),
  route({
    method: "GET", path: "/api/v1/byok", operationId: "listByokKeys", tag: "Billing", summary: "The organisation's BYOK credentials",
    auth: { kind: "portal", abilities: ["ability:keys.read", "ability:byok.write"] },
    responses: [{ status: 200, description: "Provider and last 4 characters only.", body: Schema.Struct({ credentials: Schema.Array(Schema.Struct({ provider: Schema.String, last4: Schema.String, created_at: Instant })) }), headers: ["Cache-Control"] }]
  }),
  route({
    method: "DELETE", path: "/api/v1/byok/:provider", operationId: "deleteByokKey", tag: "Billing", summary: "Remove a BYOK credential",
    auth: { kind: "portal", abilities: ["ability:byok.write"] }, pathParameters: { provider: "A provider slug of the catalogue." },
    responses: [{ status: 204, description: "Removed." }], errors: ["not_found"]
  })
]
