import { Effect, Layer } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { Payments, PaymentsNotConfigured, StripeNotConfigured } from "../../services/Payments.ts"
import { DevPayments } from "./DevPayments.ts"
import { StripePayments } from "./StripePayments.ts"

/**
 * No payment provider: every payment operation fails PaymentsNotConfigured (503 `payments_not_configured`). This is the default, so a
 * deployment never lets a portal token credit its own wallet by accident; the development layer (which does
 * exactly that) must be asked for with PAYMENTS_PROVIDER=dev (`npm start` does).
 */
const NoPayments = Layer.succeed(Payments, Payments.of({
  provider: "dev",
  createCheckout: () => Effect.fail(new PaymentsNotConfigured()),
  handleWebhook: () => Effect.fail(new StripeNotConfigured()),
  completeDevCheckout: () => Effect.fail(new PaymentsNotConfigured())
}))

/** Stripe when STRIPE_SECRET_KEY_FILE is set; the development layer only with PAYMENTS_PROVIDER=dev; else none. */
export const PaymentsLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) => {
    if (config.settings.stripeSecretKeyFile !== undefined) return StripePayments
    return config.settings.paymentsProvider === "dev" ? DevPayments : NoPayments
  })
)
