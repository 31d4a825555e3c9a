import { Context, Data, Effect } from "effect"

/** No payment provider is configured (neither Stripe nor PAYMENTS_PROVIDER=dev): top-ups are unavailable. */
export class PaymentsNotConfigured extends Data.TaggedError("PaymentsNotConfigured")<{}> {}

/** A Stripe webhook reached a gateway without Stripe. */
export class StripeNotConfigured extends Data.TaggedError("StripeNotConfigured")<{}> {}

/** The payment provider did not accept the checkout (down, refused): the caller may try again. */
export class PaymentProviderRefused extends Data.TaggedError("PaymentProviderRefused")<{}> {}

/** A Stripe webhook without a `Stripe-Signature` (`missing`) or with one that does not verify. */
export class InvalidStripeSignature extends Data.TaggedError("InvalidStripeSignature")<{ readonly missing: boolean }> {}

/** No pending development checkout of this organisation has this id. */
export class CheckoutNotFound extends Data.TaggedError("CheckoutNotFound")<{ readonly checkoutId: string }> {}

/** The development confirmation route on a gateway that takes payments through Stripe. */
export class DevCheckoutUnavailable extends Data.TaggedError("DevCheckoutUnavailable")<{}> {}

export interface Checkout {
  readonly checkoutId: string
  readonly checkoutUrl: string
  readonly amountMicros: bigint
  readonly status: "pending" | "completed"
}

export interface Completion {
  /** False when this payment had already been credited (a redelivered webhook): nothing changed. */
  readonly credited: boolean
  readonly checkoutId: string
  readonly orgId: string
}

/**
 * Top-ups through a payment provider (docs/billing.md). `createCheckout` opens a checkout intent; the wallet is
 * credited only when the provider confirms payment (Stripe: its signed webhook; development: the dev confirm
 * route), exactly once per checkout whatever number of confirmations arrive.
 */
export class Payments extends Context.Service<Payments, {
  readonly provider: "stripe" | "dev"
  readonly createCheckout: (input: { readonly orgId: string; readonly amountMicros: bigint }) => Effect.Effect<Checkout, PaymentsNotConfigured | PaymentProviderRefused>
  /** Stripe only: verifies `Stripe-Signature` over the raw body (InvalidStripeSignature). Others: StripeNotConfigured. */
  readonly handleWebhook: (rawBody: Uint8Array, signature: string | undefined) =>
    Effect.Effect<{ readonly eventType: string; readonly completion: Completion | undefined }, InvalidStripeSignature | StripeNotConfigured>
  /** Development only: marks a pending checkout of `orgId` paid. Stripe: DevCheckoutUnavailable. */
  readonly completeDevCheckout: (orgId: string, checkoutId: string) => Effect.Effect<Completion, CheckoutNotFound | DevCheckoutUnavailable | PaymentsNotConfigured>
}>()("privacy-relay/Payments") {}
