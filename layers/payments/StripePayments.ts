import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import Stripe from "stripe"
import { AppConfig } from "../../services/AppConfig.ts"
import { DevCheckoutUnavailable, InvalidStripeSignature, PaymentProviderRefused, Payments } from "../../services/Payments.ts"
import { microsToCents } from "../../src/billing/topupAmount.ts"
import { completion, makeCheckoutStore, newCheckoutId } from "./checkoutStore.ts"

const readSecret = (path: string, name: string) => {
  const value = readFileSync(path, "utf8").trim()
  if (value === "") throw new Error(`${name} names an empty file`)
  return value
}

/** `STRIPE_API_BASE` (tests: a local fake) -> the SDK's host/port/protocol options. */
const apiHostOptions = (base: string | undefined) => {
  if (base === undefined || base.trim() === "") return {}
  const url = new URL(base)
  const protocol = url.protocol === "http:" ? "http" as const : "https" as const
  return { host: url.hostname, port: url.port === "" ? (protocol === "http" ? 80 : 443) : Number(url.port), protocol }
}

const paymentsUnavailable = () => new PaymentProviderRefused()

/** What a verified Stripe event says about one of our checkouts. */
const confirmationOf = (event: Stripe.Event) => {
  if (event.type === "checkout.session.completed" || event.type === "checkout.session.async_payment_succeeded") {
    const session = event.data.object
    if (session.payment_status !== "paid") return undefined
    const paymentIntent = typeof session.payment_intent === "string" ? session.payment_intent : session.payment_intent?.id
    return { checkoutId: session.metadata?.checkout_id, cents: session.amount_total, paymentRef: paymentIntent ?? session.id }
  }
  if (event.type === "payment_intent.succeeded") {
    const intent = event.data.object
    return { checkoutId: intent.metadata?.checkout_id, cents: intent.amount_received, paymentRef: intent.id }
  }
  return undefined
}

/**
 * Top-ups through Stripe Checkout (STRIPE_SECRET_KEY_FILE). The session and its PaymentIntent carry our
 * `checkout_id` and `org_id` as metadata; the signed webhook (`checkout.session.completed` or
 * `payment_intent.succeeded`, whichever arrives first) completes the checkout once.
 */
export const StripePayments = Layer.effect(
  Payments,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const settings = config.settings
    const { secretKey, webhookSecret } = yield* Effect.try(() => {
      if (settings.stripeWebhookSecretFile === undefined) {
        throw new Error("STRIPE_SECRET_KEY_FILE is set but STRIPE_WEBHOOK_SECRET_FILE is not: payments could never be confirmed")
      }
      return {
        secretKey: readSecret(settings.stripeSecretKeyFile!, "STRIPE_SECRET_KEY_FILE"),
        webhookSecret: readSecret(settings.stripeWebhookSecretFile, "STRIPE_WEBHOOK_SECRET_FILE")
      }
    }).pipe(Effect.orDie)
    const stripe = new Stripe(secretKey, { ...apiHostOptions(settings.stripeApiBase), maxNetworkRetries: 1, timeout: 20_000 })
    const successUrl = settings.stripeSuccessUrl ?? `${config.publicBaseUrl}/billing?checkout=success`
    const cancelUrl = settings.stripeCancelUrl ?? `${config.publicBaseUrl}/billing?checkout=cancelled`
    const store = yield* makeCheckoutStore

    return Payments.of({
      provider: "stripe",
      createCheckout: ({ orgId, amountMicros }) =>
        Effect.gen(function*() {
          const checkoutId = newCheckoutId()
          const metadata = { org_id: orgId, checkout_id: checkoutId }
          const session = yield* Effect.tryPromise({
            try: () =>
              stripe.checkout.sessions.create({
                mode: "payment",
                client_reference_id: orgId,
                line_items: [{
                  quantity: 1,
                  price_data: { currency: "usd", unit_amount: microsToCents(amountMicros), product_data: { name: "Privacy Relay credit" } }
                }],
                metadata,
                payment_intent_data: { metadata },
                success_url: successUrl,
                cancel_url: cancelUrl
              }, { idempotencyKey: checkoutId }),
            catch: (cause) => cause
          }).pipe(
            Effect.tapError((cause) => Effect.logError("stripe checkout session failed", String(cause))),
            Effect.mapError(paymentsUnavailable)
          )
          yield* store.insert({ id: checkoutId, orgId, provider: "stripe", providerRef: session.id, amountMicros })
          return { checkoutId, checkoutUrl: session.url ?? "", amountMicros, status: "pending" as const }
        }),
      handleWebhook: (rawBody, signature) =>
        Effect.gen(function*() {
          if (signature === undefined) {
            return yield* new InvalidStripeSignature({ missing: true })
          }
          const event = yield* Effect.try({
            try: () => stripe.webhooks.constructEvent(Buffer.from(rawBody), signature, webhookSecret),
            catch: () => new InvalidStripeSignature({ missing: false })
          })
          const confirmation = confirmationOf(event)
          if (confirmation === undefined || confirmation.checkoutId === undefined) return { eventType: event.type, completion: undefined }
          const checkout = yield* store.find(confirmation.checkoutId)
          if (checkout === undefined || checkout.provider !== "stripe") {
            yield* Effect.logWarning("stripe event for an unknown checkout").pipe(Effect.annotateLogs({ event_id: event.id }))
            return { eventType: event.type, completion: undefined }
          }
          if (confirmation.cents !== microsToCents(BigInt(checkout.amount))) {
            // Never credit an amount other than the one paid; an operator looks at it.
            yield* Effect.logError("stripe amount differs from the checkout").pipe(Effect.annotateLogs({ event_id: event.id, checkout_id: checkout.id }))
            return { eventType: event.type, completion: undefined }
          }
          const credited = yield* store.complete(checkout.id, `stripe:${confirmation.paymentRef}`)
          return { eventType: event.type, completion: completion(credited, checkout.id, checkout.org_id) }
        }),
      completeDevCheckout: () => Effect.fail(new DevCheckoutUnavailable())
    })
  })
)
