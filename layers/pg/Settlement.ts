import { Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { ReceiptSealer } from "../../services/ReceiptSealer.ts"
import { InsufficientBalance, Settlement } from "../../services/Settlement.ts"
import { billCall } from "../../src/billing/pricing.ts"
import { issuesReceipts } from "../../src/keys/demo.ts"

/** A hold lives at most this long; the sweep returns holds of calls that never settled (a crashed node). */
const HOLD_TTL_MS = 15 * 60_000

export const SettlementPg = Layer.effect(
  Settlement,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sealer = yield* ReceiptSealer
    const config = yield* AppConfig
    const lowBalanceMicros = config.settings.lowBalanceThresholdMicros

    /**
     * Through the tenant's actor (layers/pg/ReceiptSealer.ts), so under load a tenant's holds share one statement with
     * its settlements. A batch of holds only commits without waiting for the WAL flush: a hold lost to a database
     * crash is exactly a hold released, which a crash must do anyway.
     */
    const hold = (orgId: string, amountMicros: bigint) =>
      Effect.gen(function*() {
        const id = `hold_${crypto.randomUUID().replaceAll("-", "")}`
        const taken = yield* sealer.hold({ orgId, id, amountMicros, expiresAt: new Date(Date.now() + HOLD_TTL_MS) })
        if (!taken) return yield* new InsufficientBalance()
        return { id, orgId, amountMicros }
      })

    /**
     * Returns expired holds to their wallets. Runs as a supervised fiber for the layer's lifetime; any number of
     * nodes may run it: each release deletes its hold row and returns the amount in one statement, so a hold is
     * returned once, by whichever node deletes it first (the other's release is a no-op).
     */
    const sweepExpiredHolds = Effect.gen(function*() {
      const expired = yield* sql<{ id: string; org_id: string }>`
        SELECT id, org_id FROM wallet_holds WHERE expires_at < now() ORDER BY expires_at LIMIT 1000`
      for (const row of expired) yield* sealer.release({ orgId: row.org_id, holdId: row.id })
      return expired.length
    }).pipe(
      Effect.orDie,
      Effect.tap((n) => (n > 0 ? Effect.logWarning("released expired wallet holds").pipe(Effect.annotateLogs({ count: n })) : Effect.void))
    )
    yield* Effect.forkScoped(
      Effect.repeat(
        sweepExpiredHolds.pipe(Effect.catchCause((cause) => Effect.logError("wallet hold sweep failed", cause))),
        Schedule.spaced("1 minute")
      )
    )

    return Settlement.of({
      sweepExpiredHolds,
      hold,
      release: (h) => sealer.release({ orgId: h.orgId, holdId: h.id }),
      settle: (call) =>
        Effect.gen(function*() {
          const bill = billCall({
            inputTokens: call.inputTokens,
            outputTokens: call.outputTokens,
            inputUsdPerMTok: call.target.model.inputUsdPerMTok,
            outputUsdPerMTok: call.target.model.outputUsdPerMTok,
            keyMode: call.target.keyMode
          })
          const usageId = `use_${crypto.randomUUID().replaceAll("-", "")}`
          // One atomic write by the tenant's sealing actor: hold released, receipts sealed (complete calls only), usage
          // recorded, wallet debited, ledger row appended. A crash anywhere leaves none of them.
          const { sealed, response } = yield* sealer.settle({
            orgId: call.principal.orgId,
            seal: call.partial || !issuesReceipts(call.principal) ? undefined : {
              orgId: call.principal.orgId,
              accountId: call.principal.accountId,
              keyId: call.principal.keyId,
              keyPrefix: call.principal.keyPrefix,
              requestId: call.requestId,
              providerResponseId: call.providerResponseId,
              provider: call.target.provider.slug,
              model: call.target.model.id,
              capability: call.capability,
              inputTokens: call.inputTokens,
              outputTokens: call.outputTokens,
              hashUpstreamRequest: call.hashUpstreamRequest,
              hashUpstreamResponse: call.hashUpstreamResponse,
              routingDecision: call.target.routingDecision,
              ...(call.translation === undefined ? {} : { translation: call.translation }),
              engineVersion: call.engineVersion
            },
            metered: {
              holdId: call.hold.id,
              billedMicros: bill.billedMicros,
              ledgerReference: `${call.target.provider.slug}/${call.target.model.id} ${call.providerResponseId}`,
              lowBalanceDefaultMicros: lowBalanceMicros,
              response: call.response,
              ...(call.render === undefined ? {} : { render: call.render }),
              usage: {
                id: usageId,
                request_id: call.providerResponseId,
                gateway_request_id: call.requestId,
                org_id: call.principal.orgId,
                parent_org_id: call.principal.parentOrgId,
                key_id: call.principal.keyId,
                provider: call.target.provider.slug,
                model: call.target.model.id,
                capability: call.capability,
                key_mode: call.target.keyMode,
                input_tokens: call.inputTokens,
                output_tokens: call.outputTokens,
                estimated: call.estimated,
                partial: call.partial,
                upstream_cost_micros: bill.upstreamCostMicros.toString(),
                billed_micros: bill.billedMicros.toString(),
                markup_micros: bill.markupMicros.toString(),
                trace_id: call.traceId,
                started_at: call.startedAt.toISOString()
              }
            }
          })
          // The tokens reach the monthly quota (Redis or memory, outside the transaction) with the call's finish
          // (RelayLimits.finish), in the same operation that returns its hold.
          return {
            usageId,
            billedMicros: bill.billedMicros,
            receipt: sealed === undefined ? undefined : { jti: sealed.jti, v2: sealed.v2 },
            response
          }
        })
    })
  })
)
