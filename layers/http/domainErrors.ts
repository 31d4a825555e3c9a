/**
 * The one place where the services' own failures become HTTP answers: each tagged error a service fails with maps to
 * its status, its stable code (docs/errors.md, the contract) and a message for humans. Services know nothing of HTTP;
 * routes let these failures through and `causeToResponse` (errorResponse.ts) answers them from here, as does the
 * operator CLI for the same operations.
 */
import { AdminInputInvalid, OperatorAccountNotFound, OperatorEmailNotVerified } from "../AdminErrors.ts"
import {
  AccountExists,
  AccountNotFound,
  AlreadyMember,
  AlreadyVerified,
  NestedSubOrganisation,
  VerificationLinkInvalid,
  VerificationLinkSpent
} from "../../services/Accounts.ts"
import { IDEMPOTENCY_KEY_MAX, IdempotencyInFlight, IdempotencyKeyConflict, InvalidIdempotencyKey } from "../../services/Idempotency.ts"
import { KeyNotActive, KeyNotFound } from "../../services/KeyManagement.ts"
import { AmbiguousKeyPrefix, InvalidKey, KeyExpired, KeyPrefixNotFound, KeyRevoked } from "../../services/Keys.ts"
import { InvalidLicence, LicenceAlreadyRedeemed } from "../../services/Licences.ts"
import { MailUnavailable } from "../../services/Mailer.ts"
import { ParentOrganisationNotFound } from "../../services/Organisations.ts"
import {
  CheckoutNotFound,
  DevCheckoutUnavailable,
  InvalidStripeSignature,
  PaymentProviderRefused,
  PaymentsNotConfigured,
  StripeNotConfigured
} from "../../services/Payments.ts"
import { CsrfFailed, InvalidCredentials, NotAMember, SessionNotValid } from "../../services/PortalSessions.ts"
import { PortalTokenNotValid, UnknownAbilities } from "../../services/PortalTokens.ts"
import { ModelNotAllowed, ModelNotFound, ProviderNotConfigured, UnknownRoutingStrategy } from "../../services/ProviderRouter.ts"
import { QuotaExceeded, RateLimited } from "../../services/RelayLimits.ts"
import { InsufficientBalance } from "../../services/Settlement.ts"
import { ReceiptKeyFromFile } from "../../services/ReceiptKeys.ts"
import { SsoNotConfigured } from "../../services/SsoConnections.ts"
import { SsoRejected } from "../../services/SsoSignIn.ts"
import { ScimOrganisationNotFound, ScimTokenNotFound } from "../../services/ScimTokens.ts"
import { TreeSizeOutOfRange } from "../../services/TransparencyLog.ts"
import { OrganisationNotFound } from "../../services/Wallets.ts"
import { WebhookDeliveryNotFound, WebhookEndpointNotFound } from "../../services/Webhooks.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { ROUTING_HEADER } from "../../src/routing/strategy.ts"

export type DomainError =
  | OrganisationNotFound
  | ParentOrganisationNotFound
  | InvalidLicence
  | LicenceAlreadyRedeemed
  | TreeSizeOutOfRange
  | MailUnavailable
  | ReceiptKeyFromFile
  | KeyNotFound
  | KeyNotActive
  | PaymentsNotConfigured
  | StripeNotConfigured
  | PaymentProviderRefused
  | InvalidStripeSignature
  | CheckoutNotFound
  | DevCheckoutUnavailable
  | WebhookEndpointNotFound
  | WebhookDeliveryNotFound
  | UnknownAbilities
  | PortalTokenNotValid
  | ModelNotFound
  | ModelNotAllowed
  | UnknownRoutingStrategy
  | ProviderNotConfigured
  | QuotaExceeded
  | RateLimited
  | InsufficientBalance
  | InvalidKey
  | KeyRevoked
  | KeyExpired
  | KeyPrefixNotFound
  | AmbiguousKeyPrefix
  | AccountExists
  | InvalidCredentials
  | NotAMember
  | SessionNotValid
  | CsrfFailed
  | SsoNotConfigured
  | SsoRejected
  | InvalidIdempotencyKey
  | IdempotencyKeyConflict
  | IdempotencyInFlight
  | AccountNotFound
  | AlreadyVerified
  | VerificationLinkInvalid
  | VerificationLinkSpent
  | AlreadyMember
  | NestedSubOrganisation
  | ScimOrganisationNotFound
  | ScimTokenNotFound
  | AdminInputInvalid
  | OperatorAccountNotFound
  | OperatorEmailNotVerified

const DOMAIN_ERRORS = [
  OrganisationNotFound,
  ParentOrganisationNotFound,
  InvalidLicence,
  LicenceAlreadyRedeemed,
  TreeSizeOutOfRange,
  MailUnavailable,
  ReceiptKeyFromFile,
  KeyNotFound,
  KeyNotActive,
  PaymentsNotConfigured,
  StripeNotConfigured,
  PaymentProviderRefused,
  InvalidStripeSignature,
  CheckoutNotFound,
  DevCheckoutUnavailable,
  WebhookEndpointNotFound,
  WebhookDeliveryNotFound,
  UnknownAbilities,
  PortalTokenNotValid,
  ModelNotFound,
  ModelNotAllowed,
  UnknownRoutingStrategy,
  ProviderNotConfigured,
  QuotaExceeded,
  RateLimited,
  InsufficientBalance,
  InvalidKey,
  KeyRevoked,
  KeyExpired,
  KeyPrefixNotFound,
  AmbiguousKeyPrefix,
  AccountExists,
  InvalidCredentials,
  NotAMember,
  SessionNotValid,
  CsrfFailed,
  SsoNotConfigured,
  SsoRejected,
  InvalidIdempotencyKey,
  IdempotencyKeyConflict,
  IdempotencyInFlight,
  AccountNotFound,
  AlreadyVerified,
  VerificationLinkInvalid,
  VerificationLinkSpent,
  AlreadyMember,
  NestedSubOrganisation,
  ScimOrganisationNotFound,
  ScimTokenNotFound,
  AdminInputInvalid,
  OperatorAccountNotFound,
  OperatorEmailNotVerified
] as const

export const isDomainError = (u: unknown): u is DomainError => DOMAIN_ERRORS.some((error) => u instanceof error)

export const domainErrorToApiError = (error: DomainError): ApiError => {
  switch (error._tag) {
    case "OrganisationNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No such organisation." })
    case "ParentOrganisationNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "The parent organisation does not exist." })
    case "InvalidLicence":
      return new ApiError({ status: 400, code: "invalid_licence", message: `The licence code is not valid (${error.reason}).` })
    case "LicenceAlreadyRedeemed":
      return new ApiError({ status: 409, code: "licence_already_redeemed", message: "This licence code has already been redeemed." })
    case "MailUnavailable":
      return new ApiError({ status: 503, code: "mail_unavailable", message: "The e-mail could not be sent; try again later." })
    case "ReceiptKeyFromFile":
      return new ApiError({
        status: 409,
        code: "receipt_key_from_file",
        message: "Receipt keys come from RECEIPT_SIGNING_KEY_FILE: replace the file and restart to rotate."
      })
    case "KeyNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No such key." })
    case "KeyNotActive":
      return new ApiError({ status: 409, code: "key_not_active", message: `This key is ${error.status}; only active keys can be changed.` })
    case "PaymentsNotConfigured":
      return new ApiError({
        status: 503,
        code: "payments_not_configured",
        message: "Top-ups are not available: no payment provider is configured on this gateway."
      })
    case "StripeNotConfigured":
      return new ApiError({ status: 404, code: "not_found", message: "Stripe is not configured." })
    case "PaymentProviderRefused":
      return new ApiError({ status: 502, code: "payment_provider_error", message: "The payment provider did not accept the checkout; try again." })
    case "InvalidStripeSignature":
      return new ApiError({
        status: 400,
        code: "invalid_signature",
        message: error.missing ? "Missing Stripe-Signature header." : "The Stripe-Signature does not verify."
      })
    case "CheckoutNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No such pending checkout." })
    case "DevCheckoutUnavailable":
      return new ApiError({ status: 404, code: "not_found", message: "Not found." })
    case "WebhookEndpointNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No webhook endpoint with this id in your organisation." })
    case "WebhookDeliveryNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No webhook delivery with this id in your organisation." })
    case "UnknownAbilities":
      return new ApiError({
        status: 400,
        code: "invalid_request",
        message: `Unknown abilities: ${error.abilities.join(", ")}`,
        extra: { details: { path: "abilities" } }
      })
    case "PortalTokenNotValid":
      return new ApiError({ status: 401, code: "portal_auth_required", message: "This route needs a portal session or portal token (spt_...)." })
    case "ModelNotFound":
      return new ApiError({
        status: 404,
        code: "model_not_found",
        message: error.inCatalogue
          ? `Model "${error.modelId}" does not serve this route.`
          : `Model "${error.modelId}" is not in the catalogue (GET /api/v1/models?include=unavailable lists it).`
      })
    case "ModelNotAllowed":
      return new ApiError({ status: 403, code: "model_not_allowed", message: `This key may not use model "${error.modelId}".`, extra: { allowed: error.allowed } })
    case "UnknownRoutingStrategy":
      return new ApiError({
        status: 400,
        code: "invalid_request",
        message: `Unknown routing strategy "${error.strategy.slice(0, 32)}" in X-Service-Routing (use "cost" or "off").`,
        extra: { details: { path: ROUTING_HEADER } }
      })
    case "ProviderNotConfigured":
      // 400, not 503: nothing changes by retrying, and the official SDKs retry every status >= 500 (docs/decisions.md).
      return new ApiError({
        status: 400,
        code: "provider_not_configured",
        message: `Provider "${error.provider}" is not configured for this organisation: the gateway has no ` +
          `pooled key or base URL for it and no own key is stored (PUT /api/v1/byok/${error.provider}). ` +
          `GET /api/v1/models lists the models this key can call.`
      })
    case "QuotaExceeded":
      return new ApiError({
        status: 429,
        code: "quota_exceeded",
        message: `The monthly token quota for ${error.capability} (${error.quotaTokens} tokens) is used up; it resets at the start of next month (UTC).`,
        extra: { quota_tokens: error.quotaTokens, used_tokens: error.usedTokens },
        headers: { ...error.rateLimit, "retry-after": String(error.retryAfterSeconds) }
      })
    case "RateLimited":
      return new ApiError({
        status: 429,
        code: "rate_limited",
        message: `Rate limit reached (${error.windows.join(", ")}). Retry after ${error.retryAfterSeconds} s.`,
        extra: { limits: error.windows },
        headers: { ...error.rateLimit, "retry-after": String(Math.max(1, error.retryAfterSeconds)) }
      })
    case "InsufficientBalance":
      return new ApiError({
        status: 402,
        code: "insufficient_balance",
        message: "The wallet balance is not positive (or fully reserved by calls in flight). Top up to relay calls."
      })
    case "InvalidKey":
      return new ApiError({ status: 401, code: "invalid_key", message: "The API key is missing, malformed or unknown." })
    case "KeyRevoked":
      return new ApiError({ status: 401, code: "key_revoked", message: "This API key has been revoked." })
    case "KeyExpired":
      return new ApiError({ status: 401, code: "key_expired", message: "This API key has expired (demo keys last 24 hours). Get a new one." })
    case "KeyPrefixNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No key has this prefix." })
    case "AmbiguousKeyPrefix":
      return new ApiError({ status: 409, code: "ambiguous_prefix", message: "Several keys share this prefix." })
    case "AccountExists":
      return new ApiError({ status: 409, code: "account_exists", message: "An account already exists for this e-mail address." })
    case "InvalidCredentials":
      return new ApiError({ status: 401, code: "invalid_credentials", message: "The e-mail address or password is wrong." })
    case "NotAMember":
      return new ApiError({ status: 403, code: "not_a_member", message: "This account is not a member of that organisation." })
    case "SessionNotValid":
      return new ApiError({ status: 401, code: "portal_auth_required", message: "The portal session is missing, expired or signed out." })
    case "CsrfFailed":
      return new ApiError({
        status: 403,
        code: "csrf_failed",
        message: "Cookie-authenticated writes need the X-CSRF-Token header matching the pr_csrf cookie."
      })
    case "SsoNotConfigured":
      return new ApiError({
        status: 404,
        code: "sso_not_configured",
        message: "Single sign-on is not set up for this organisation (an operator enables it: docs/sso.md)."
      })
    case "SsoRejected":
      return new ApiError({
        status: 401,
        code: "sso_rejected",
        message: `Single sign-on refused: ${error.detail}`,
        extra: { details: { reason: error.reason } }
      })
    case "InvalidIdempotencyKey":
      return new ApiError({
        status: 400,
        code: "invalid_idempotency_key",
        message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} printable characters (a UUID v4 is recommended).`
      })
    case "IdempotencyKeyConflict":
      return new ApiError({
        status: 409,
        code: "idempotency_key_conflict",
        message: "This Idempotency-Key was used with a different request body in the last 24 hours."
      })
    case "IdempotencyInFlight":
      return new ApiError({
        status: 409,
        code: "idempotency_in_flight",
        message: "The original request with this Idempotency-Key is still running; retry shortly to get its response.",
        headers: { "retry-after": "1" }
      })
    case "AccountNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No such account." })
    case "AlreadyVerified":
      return new ApiError({ status: 409, code: "already_verified", message: "This e-mail address is already verified." })
    case "VerificationLinkInvalid":
      return new ApiError({ status: 404, code: "verification_link_invalid", message: "This verification link is not valid." })
    case "VerificationLinkSpent":
      return error.used
        ? new ApiError({ status: 410, code: "verification_link_used", message: "This verification link has already been used." })
        : new ApiError({ status: 410, code: "verification_link_expired", message: "This verification link has expired; ask for a new one." })
    case "AlreadyMember":
      return new ApiError({ status: 409, code: "already_member", message: "This user is already a member of the organisation." })
    case "NestedSubOrganisation":
      return new ApiError({ status: 409, code: "nested_sub_organisation", message: "A sub-organisation cannot have sub-organisations." })
    case "ScimOrganisationNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No such organisation." })
    case "ScimTokenNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No active SCIM token with this id in the organisation." })
    case "AdminInputInvalid":
      return new ApiError({ status: 400, code: "invalid_request", message: error.message, extra: { details: { path: error.path } } })
    case "OperatorAccountNotFound":
      return new ApiError({ status: 404, code: "not_found", message: "No account has that e-mail address." })
    case "OperatorEmailNotVerified":
      return new ApiError({ status: 409, code: "email_not_verified", message: "Only an account with a verified e-mail address can be made an operator." })
    case "TreeSizeOutOfRange": {
      const { first, second, treeSize } = error
      return new ApiError({
        status: 400,
        code: "tree_size_out_of_range",
        message: first < 1
          ? "first must be at least 1: every tree extends the empty one, so there is nothing to prove."
          : second > treeSize
          ? `second (${second}) is beyond the log's tree size (${treeSize}).`
          : `first (${first}) must not be greater than second (${second}).`,
        extra: { details: { first, second, tree_size: treeSize } }
      })
    }
  }
}

/** An ApiError as it is, a service's own error as its HTTP answer. */
export const asApiError = (error: ApiError | DomainError): ApiError => error instanceof ApiError ? error : domainErrorToApiError(error)
