import { Effect, Layer } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { DevPayments } from "./DevPayments.ts"
import { StripePayments } from "./StripePayments.ts"

/** Stripe when STRIPE_SECRET_KEY_FILE is set, the development layer otherwise. */
export const PaymentsLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) => {
    const key = config.env.STRIPE_SECRET_KEY_FILE
    return key !== undefined && key.trim() !== "" ? StripePayments : DevPayments
  })
)
