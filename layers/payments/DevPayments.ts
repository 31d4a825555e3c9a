import { Effect, Layer } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { CheckoutNotFound, Payments, StripeNotConfigured } from "../../services/Payments.ts"
import { completion, makeCheckoutStore, newCheckoutId } from "./checkoutStore.ts"

/**
 * Development payments (no STRIPE_SECRET_KEY_FILE): a checkout is a local row, "paid" by
 * `POST /api/v1/billing/dev/checkouts/{id}/complete` from a portal token of the same organisation. Never run a
 * deployment that takes real customers without Stripe configured: anyone with `ability:billing.write` can credit
 * their own wallet here (the gateway logs a warning at start).
 */
export const DevPayments = Layer.effect(
  Payments,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* makeCheckoutStore
    yield* Effect.logWarning("payments: development layer (no STRIPE_SECRET_KEY_FILE); top-ups are confirmed by the dev route")
    return Payments.of({
      provider: "dev",
      createCheckout: ({ orgId, amountMicros }) =>
        Effect.gen(function*() {
          const checkoutId = newCheckoutId()
          yield* store.insert({ id: checkoutId, orgId, provider: "dev", providerRef: null, amountMicros })
          return {
            checkoutId,
            checkoutUrl: `${config.publicBaseUrl}/api/v1/billing/dev/checkouts/${checkoutId}/complete`,
            amountMicros,
            status: "pending" as const
          }
        }),
      handleWebhook: () => Effect.fail(new StripeNotConfigured()),
      completeDevCheckout: (orgId, checkoutId) =>
        Effect.gen(function*() {
          const checkout = yield* store.find(checkoutId)
          if (checkout === undefined || checkout.org_id !== orgId || checkout.provider !== "dev") return yield* new CheckoutNotFound({ checkoutId })
          const credited = yield* store.complete(checkoutId, `dev:${checkoutId}`)
          return completion(credited, checkoutId, orgId)
        })
    })
  })
)
