import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"

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
  readonly createCheckout: (input: { readonly orgId: string; readonly amountMicros: bigint }) => Effect.Effect<Checkout, ApiError>
  /** Stripe only: verifies `Stripe-Signature` over the raw body; 400 `invalid_signature`. Dev: 404. */
  readonly handleWebhook: (rawBody: Uint8Array, signature: string | undefined) =>
    Effect.Effect<{ readonly eventType: string; readonly completion: Completion | undefined }, ApiError>
  /** Development only: marks a pending checkout of `orgId` paid. Stripe: 404. */
  readonly completeDevCheckout: (orgId: string, checkoutId: string) => Effect.Effect<Completion, ApiError>
}>()("privacy-relay/Payments") {}
