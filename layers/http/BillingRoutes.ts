import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { BillingHistory, type UsageDay, type UsageRecord } from "../../services/BillingHistory.ts"
import { Licences } from "../../services/Licences.ts"
import { Payments } from "../../services/Payments.ts"
import { Wallets } from "../../services/Wallets.ts"
import { formatUsd } from "../../src/billing/money.ts"
import { parseTopupAmount } from "../../src/billing/topupAmount.ts"
import { invalid, rejectUnknownFields } from "../../src/http/validate.ts"
import { requirePortal } from "./auth.ts"
import { idempotentPortalRoute } from "./idempotent.ts"
import { readBodyBytes, readDocumentedBody } from "./body.ts"
import { readPage } from "./pagination.ts"
import { apiRoute } from "./api/apiRoutes.ts"

const DAY_MS = 86_400_000

const usageRecordJson = (r: UsageRecord) => ({
  id: r.id,
  request_id: r.requestId,
  key_id: r.keyId,
  provider: r.provider,
  model: r.model,
  capability: r.capability,
  key_mode: r.keyMode,
  input_tokens: r.inputTokens,
  output_tokens: r.outputTokens,
  billed_micros: Number(r.billedMicros),
  billed_usd: formatUsd(r.billedMicros),
  upstream_cost_micros: Number(r.upstreamCostMicros),
  markup_micros: Number(r.markupMicros),
  estimated: r.estimated,
  partial: r.partial,
  receipt_jti: r.receiptJti,
  finished_at: r.finishedAt
})

const usageDayJson = (d: UsageDay) => ({
  day: d.day,
  provider: d.provider,
  model: d.model,
  calls: d.calls,
  input_tokens: d.inputTokens,
  output_tokens: d.outputTokens,
  billed_micros: Number(d.billedMicros),
  billed_usd: formatUsd(d.billedMicros)
})

/**
 * `GET .../usage` for one organisation: daily totals per model in [from, to), the calls refused after their key was
 * accepted per day and error code (what an error rate needs), and a page of records.
 */
export const usageResponse = (orgId: string) =>
  Effect.gen(function*() {
    const history = yield* BillingHistory
    const { limit, cursor, search } = yield* readPage
    const parseDate = (name: string, fallback: Date) => {
      const raw = search.get(name)
      if (raw === null) return Effect.succeed(fallback)
      const at = new Date(raw)
      return Number.isNaN(at.getTime()) ? Effect.fail(invalid(name, `${name} is an ISO 8601 date or instant.`)) : Effect.succeed(at)
    }
    const to = yield* parseDate("to", new Date(Date.now() + 1000))
    const from = yield* parseDate("from", new Date(to.getTime() - 30 * DAY_MS))
    const summary = yield* history.usageByDay(orgId, { from, to })
    const failures = yield* history.failuresByDay(orgId, { from, to })
    const page = yield* history.usage(orgId, { limit, cursor })
    return HttpServerResponse.jsonUnsafe({
      org_id: orgId,
      from: from.toISOString(),
      to: to.toISOString(),
      summary: summary.map(usageDayJson),
      failures: failures.map((f) => ({ day: f.day, status: f.status, error_code: f.errorCode, calls: f.calls })),
      records: page.items.map(usageRecordJson),
      next_cursor: page.nextCursor
    })
  })

/**
 * Billing under `/api/v1/billing/*` (docs/billing.md): balance, ledger and usage reads (`ability:billing.read`),
 * top-up checkouts and licence redemption (`ability:billing.write`), the Stripe webhook (public, signed) and the
 * development checkout confirmation.
 */
export const BillingRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const wallets = yield* Wallets
  const payments = yield* Payments
  const licences = yield* Licences
  const history = yield* BillingHistory
  const config = yield* AppConfig
  const minTopup = config.settings.topupMinMicros
  const maxTopup = config.settings.topupMaxMicros

  yield* router.add("GET", "/api/v1/billing/balance", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.read")
    const balance = yield* wallets.balance(portal.orgId)
    return HttpServerResponse.jsonUnsafe({ balance_micros: Number(balance), balance_usd: formatUsd(balance) })
  }))

  const topup = Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.write")
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/billing/topup"))
    const unknown = rejectUnknownFields(body, ["amount_usd"])
    if (unknown !== undefined) return yield* unknown
    const amount = parseTopupAmount(body.amount_usd, minTopup, maxTopup)
    if (!amount.ok) return yield* invalid("amount_usd", amount.message)
    const checkout = yield* payments.createCheckout({ orgId: portal.orgId, amountMicros: amount.micros })
    return HttpServerResponse.jsonUnsafe({
      checkout_id: checkout.checkoutId,
      checkout_url: checkout.checkoutUrl,
      amount_micros: Number(checkout.amountMicros),
      amount_usd: formatUsd(checkout.amountMicros),
      status: checkout.status,
      provider: payments.provider
    }, { status: 201, headers: { "cache-control": "no-store" } })
  })
  // One operation name for the three aliases: a retry through another alias replays the same checkout.
  const idempotentTopup = idempotentPortalRoute("ability:billing.write", "billing.topup", topup)
  yield* router.add("POST", "/api/v1/billing/topup", idempotentTopup)
  yield* router.add("POST", "/api/billing/topup", idempotentTopup)
  yield* router.add("POST", "/api/billing/checkout/topup", idempotentTopup)

  // Public: authenticated by the Stripe-Signature over the exact raw body.
  yield* router.add("POST", "/api/v1/billing/webhooks/stripe", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const raw = yield* readBodyBytes
    const { eventType, completion } = yield* payments.handleWebhook(raw, request.headers["stripe-signature"])
    return HttpServerResponse.jsonUnsafe({ received: true, type: eventType, credited: completion?.credited ?? false })
  }))

  yield* router.add("POST", "/api/v1/billing/dev/checkouts/:id/complete", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.write")
    const { id } = yield* HttpRouter.params
    const done = yield* payments.completeDevCheckout(portal.orgId, id ?? "")
    return HttpServerResponse.jsonUnsafe({ checkout_id: done.checkoutId, status: "completed", credited: done.credited })
  }))

  const redeem = Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.write")
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/billing/redeem-license"))
    const unknown = rejectUnknownFields(body, ["code"])
    if (unknown !== undefined) return yield* unknown
    if (typeof body.code !== "string") return yield* invalid("code", "code is the licence code string.")
    const r = yield* licences.redeem(portal.orgId, body.code)
    return HttpServerResponse.jsonUnsafe({
      licence_id: r.licenceId,
      amount_micros: Number(r.amountMicros),
      amount_usd: formatUsd(r.amountMicros),
      balance_micros: Number(r.balanceMicros),
      balance_usd: formatUsd(r.balanceMicros)
    })
  })
  const idempotentRedeem = idempotentPortalRoute("ability:billing.write", "billing.redeem-license", redeem)
  yield* router.add("POST", "/api/billing/redeem-license", idempotentRedeem)
  yield* router.add("POST", "/api/v1/billing/redeem-license", idempotentRedeem)

  yield* router.add("GET", "/api/v1/billing/ledger", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.read")
    const { limit, cursor } = yield* readPage
    const page = yield* history.ledger(portal.orgId, { limit, cursor })
    return HttpServerResponse.jsonUnsafe({
      entries: page.items.map((e) => ({
        id: e.id,
        kind: e.kind,
        amount_micros: Number(e.amountMicros),
        amount_usd: formatUsd(e.amountMicros),
        reference: e.reference,
        usage_id: e.usageId,
        created_at: e.createdAt
      })),
      next_cursor: page.nextCursor
    })
  }))

  yield* router.add("GET", "/api/v1/billing/usage", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.read")
    return yield* usageResponse(portal.orgId)
  }))
}))
