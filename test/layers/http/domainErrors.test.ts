// The services' own errors become HTTP answers in one place (layers/http/domainErrors.ts): each maps to the status
// and code docs/errors.md lists for it, and a route that lets one through answers that envelope.
import { Cause, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { causeToResponse } from "../../../layers/http/errorResponse.ts"
import { asApiError, type DomainError, domainErrorToApiError, isDomainError } from "../../../layers/http/domainErrors.ts"
import {
  AccountExists,
  AccountNotFound,
  AlreadyMember,
  AlreadyVerified,
  NestedSubOrganisation,
  VerificationLinkInvalid,
  VerificationLinkSpent
} from "../../../services/Accounts.ts"
import { IdempotencyInFlight, IdempotencyKeyConflict, InvalidIdempotencyKey } from "../../../services/Idempotency.ts"
import { KeyNotActive, KeyNotFound } from "../../../services/KeyManagement.ts"
import { AmbiguousKeyPrefix, InvalidKey, KeyExpired, KeyPrefixNotFound, KeyRevoked } from "../../../services/Keys.ts"
import { InvalidLicence, LicenceAlreadyRedeemed } from "../../../services/Licences.ts"
import { MailUnavailable } from "../../../services/Mailer.ts"
import { ParentOrganisationNotFound } from "../../../services/Organisations.ts"
import {
  CheckoutNotFound,
  DevCheckoutUnavailable,
  InvalidStripeSignature,
  PaymentProviderRefused,
  PaymentsNotConfigured,
  StripeNotConfigured
} from "../../../services/Payments.ts"
import { CsrfFailed, InvalidCredentials, NotAMember, SessionNotValid } from "../../../services/PortalSessions.ts"
import { PortalTokenNotValid, UnknownAbilities } from "../../../services/PortalTokens.ts"
import { ModelNotAllowed, ModelNotFound, ProviderNotConfigured, UnknownRoutingStrategy } from "../../../services/ProviderRouter.ts"
import { QuotaExceeded, RateLimited } from "../../../services/RelayLimits.ts"
import { InsufficientBalance } from "../../../services/Settlement.ts"
import { ReceiptKeyFromFile } from "../../../services/ReceiptKeys.ts"
import { TreeSizeOutOfRange } from "../../../services/TransparencyLog.ts"
import { OrganisationNotFound } from "../../../services/Wallets.ts"
import { WebhookDeliveryNotFound, WebhookEndpointNotFound } from "../../../services/Webhooks.ts"
import { ApiError } from "../../../src/http/ApiError.ts"
import { documentedErrors } from "../../support/errorCatalogue.ts"

const EXAMPLES: ReadonlyArray<readonly [DomainError, number, string]> = [
  [new OrganisationNotFound({ orgId: "org_x" }), 404, "not_found"],
  [new ParentOrganisationNotFound({ parentId: "org_x" }), 404, "not_found"],
  [new InvalidLicence({ reason: "bad signature" }), 400, "invalid_licence"],
  [new LicenceAlreadyRedeemed({ licenceId: "lic_1" }), 409, "licence_already_redeemed"],
  [new TreeSizeOutOfRange({ first: 3, second: 9, treeSize: 5 }), 400, "tree_size_out_of_range"],
  [new MailUnavailable(), 503, "mail_unavailable"],
  [new ReceiptKeyFromFile(), 409, "receipt_key_from_file"],
  [new KeyNotFound({ keyId: "key_1" }), 404, "not_found"],
  [new KeyNotActive({ status: "revoked" }), 409, "key_not_active"],
  [new PaymentsNotConfigured(), 503, "payments_not_configured"],
  [new StripeNotConfigured(), 404, "not_found"],
  [new PaymentProviderRefused(), 502, "payment_provider_error"],
  [new InvalidStripeSignature({ missing: true }), 400, "invalid_signature"],
  [new CheckoutNotFound({ checkoutId: "chk_1" }), 404, "not_found"],
  [new DevCheckoutUnavailable(), 404, "not_found"],
  [new WebhookEndpointNotFound(), 404, "not_found"],
  [new WebhookDeliveryNotFound(), 404, "not_found"],
  [new PortalTokenNotValid(), 401, "portal_auth_required"],
  [new ModelNotFound({ modelId: "m", inCatalogue: false }), 404, "model_not_found"],
  [new ModelNotFound({ modelId: "m", inCatalogue: true }), 404, "model_not_found"],
  [new ModelNotAllowed({ modelId: "m", allowed: ["n"] }), 403, "model_not_allowed"],
  [new UnknownRoutingStrategy({ strategy: "fastest" }), 400, "invalid_request"],
  [new ProviderNotConfigured({ provider: "openai" }), 400, "provider_not_configured"],
  [new QuotaExceeded({ capability: "chat", quotaTokens: 5, usedTokens: 7, retryAfterSeconds: 60, rateLimit: {} }), 429, "quota_exceeded"],
  [new RateLimited({ windows: ["key"], retryAfterSeconds: 3, rateLimit: {} }), 429, "rate_limited"],
  [new InsufficientBalance(), 402, "insufficient_balance"],
  [new InvalidKey(), 401, "invalid_key"],
  [new KeyRevoked(), 401, "key_revoked"],
  [new KeyExpired(), 401, "key_expired"],
  [new KeyPrefixNotFound({ keyPrefix: "svc_abcdefgh" }), 404, "not_found"],
  [new AmbiguousKeyPrefix({ keyPrefix: "svc_abcdefgh" }), 409, "ambiguous_prefix"],
  [new AccountExists(), 409, "account_exists"],
  [new InvalidCredentials(), 401, "invalid_credentials"],
  [new NotAMember(), 403, "not_a_member"],
  [new SessionNotValid(), 401, "portal_auth_required"],
  [new CsrfFailed(), 403, "csrf_failed"],
  [new InvalidIdempotencyKey(), 400, "invalid_idempotency_key"],
  [new IdempotencyKeyConflict(), 409, "idempotency_key_conflict"],
  [new IdempotencyInFlight(), 409, "idempotency_in_flight"],
  [new AccountNotFound({ accountId: "acct_1" }), 404, "not_found"],
  [new VerificationLinkInvalid(), 404, "verification_link_invalid"],
  [new VerificationLinkSpent({ used: true }), 410, "verification_link_used"],
  [new VerificationLinkSpent({ used: false }), 410, "verification_link_expired"],
  [new AlreadyMember(), 409, "already_member"],
  [new NestedSubOrganisation(), 409, "nested_sub_organisation"]
]

describe("domain errors to HTTP", () => {
  it.each(EXAMPLES)("%s answers its catalogued status and code", (error, status, code) => {
    const api = domainErrorToApiError(error)
    expect({ status: api.status, code: api.code }).toEqual({ status, code })
    expect(documentedErrors().get(code)).toBe(status)
    expect(api.message).toMatch(/^\w.{8,}\.$/)
  })

  it("keeps the messages and details the services used to build", () => {
    expect(domainErrorToApiError(new InvalidLicence({ reason: "bad signature" })).message).toBe("The licence code is not valid (bad signature).")
    expect(domainErrorToApiError(new InvalidStripeSignature({ missing: false })).message).toBe("The Stripe-Signature does not verify.")
    expect(domainErrorToApiError(new KeyNotActive({ status: "rotated" })).message).toBe("This key is rotated; only active keys can be changed.")
    expect(domainErrorToApiError(new TreeSizeOutOfRange({ first: 3, second: 9, treeSize: 5 })).toBody()).toEqual({
      error: {
        code: "tree_size_out_of_range",
        message: "second (9) is beyond the log's tree size (5).",
        details: { first: 3, second: 9, tree_size: 5 }
      }
    })
    expect(domainErrorToApiError(new UnknownAbilities({ abilities: ["ability:x", "ability:y"] }))).toMatchObject({ status: 400 })
    expect(domainErrorToApiError(new UnknownAbilities({ abilities: ["ability:x", "ability:y"] })).toBody()).toEqual({
      error: { code: "invalid_request", message: "Unknown abilities: ability:x, ability:y", details: { path: "abilities" } }
    })
    // The strategy is echoed at most 32 characters long, whatever length the header had.
    expect(domainErrorToApiError(new UnknownRoutingStrategy({ strategy: "x".repeat(200) })).message).toBe(
      `Unknown routing strategy "${"x".repeat(32)}" in X-Service-Routing (use "cost" or "off").`
    )
    const rateLimit = { "ratelimit-policy": `"key";q=20;w=60`, ratelimit: `"key";r=0;t=0` }
    // A window that has already freed a slot still tells the caller to wait a second, as the header always did.
    expect(domainErrorToApiError(new RateLimited({ windows: ["key", "tenant-60s"], retryAfterSeconds: 0, rateLimit }))).toMatchObject({
      message: "Rate limit reached (key, tenant-60s). Retry after 0 s.",
      extra: { limits: ["key", "tenant-60s"] },
      headers: { ...rateLimit, "retry-after": "1" }
    })
    expect(domainErrorToApiError(new QuotaExceeded({ capability: "chat", quotaTokens: 5, usedTokens: 7, retryAfterSeconds: 86400, rateLimit }))).toMatchObject({
      extra: { quota_tokens: 5, used_tokens: 7 },
      headers: { ...rateLimit, "retry-after": "86400" }
    })
    // Not in docs/errors.md: no route reaches it (a verified address gets no new link, silently), kept as it was.
    expect(domainErrorToApiError(new AlreadyVerified()).toBody()).toEqual({ error: { code: "already_verified", message: "This e-mail address is already verified." } })
    expect(domainErrorToApiError(new TreeSizeOutOfRange({ first: 0, second: 5, treeSize: 5 })).message).toMatch(/^first must be at least 1/)
    expect(domainErrorToApiError(new TreeSizeOutOfRange({ first: 4, second: 2, treeSize: 5 })).message).toBe("first (4) must not be greater than second (2).")
  })

  it("a route failing with a service's error answers the mapped envelope, not 500", async () => {
    const response = await Effect.runPromise(causeToResponse(Cause.fail(new LicenceAlreadyRedeemed({ licenceId: "lic_1" })), "req_1"))
    expect(response.status).toBe(409)
    expect(JSON.parse(new TextDecoder().decode((response.body as { body: Uint8Array }).body))).toEqual({
      error: { code: "licence_already_redeemed", message: "This licence code has already been redeemed." }
    })
  })

  it("tells its own errors from anything else, and passes an ApiError through", () => {
    expect(isDomainError(new OrganisationNotFound({ orgId: "o" }))).toBe(true)
    expect(isDomainError(new Error("x"))).toBe(false)
    expect(isDomainError({ _tag: "OrganisationNotFound" })).toBe(false)
    const api = new ApiError({ status: 418, code: "x", message: "y" })
    expect(asApiError(api)).toBe(api)
  })
})
