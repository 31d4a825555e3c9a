import { Effect } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { ReceiptSealer } from "../../services/ReceiptSealer.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import { DEFAULT_ENGINE_ALLOWLIST } from "../../sdks/typescript/src/wire/attestation/engine-allowlist.ts"
import { issuesReceipts } from "../../src/keys/demo.ts"
import type { Scope } from "../../src/keys/scopes.ts"
import type { RelayRoute } from "../../src/relay/requestShape.ts"
import { countTokens } from "../relay/countTokens.ts"
import { asApiError } from "./domainErrors.ts"
import { createProviderHealth } from "../relay/providerHealth.ts"
import { createKeyRotation } from "../relay/keyRotation.ts"
import { relayCall } from "../relay/relayCall.ts"
import { checkScope, requireGatewayKey } from "./auth.ts"


/**
 * The relay routes. Scopes: chat completions, responses and embeddings need `completions`, messages and its token
 * counting need `messages` (docs/relay.md).
 */
export const RelayRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const config = yield* AppConfig
  const sealer = yield* ReceiptSealer
  const settings = {
    // ENGINE_ALLOWLIST_JSON overrides the official engines: `[{"id":"relay-ts","minVersion":"0.1.0","sha256":[...]}]`.
    allowlist: config.settings.engineAllowlist ?? DEFAULT_ENGINE_ALLOWLIST,
    health: createProviderHealth(config.settings.providerCoolDownMs),
    keys: createKeyRotation(config.settings.providerCoolDownMs)
  }
  const relay = (route: RelayRoute, scope: Scope) =>
    Effect.gen(function*() {
      const principal = yield* requireGatewayKey(undefined, { demo: "allowed" })
      const { stages } = yield* RequestContext
      stages.end("auth")
      // From here the key is accepted: a failure, a missing scope included, carries a signed failed-call receipt.
      // The Idempotency-Key (if any) is handled inside the call: its slot is part of the call's one admission step.
      const key = (yield* HttpServerRequest.HttpServerRequest).headers["idempotency-key"]
      return yield* Effect.andThen(checkScope(principal, scope), relayCall(route, principal, settings, key)).pipe(
        // The services' own refusals (no such model, wallet empty, ...) carry a failed-call receipt like the rest.
        Effect.mapError(asApiError),
        Effect.catchTag("ApiError", (error) =>
          Effect.gen(function*() {
            // A demo key gets no receipt of any kind, failed-call receipts included.
            if (!issuesReceipts(principal)) return yield* error
            const ctx = yield* RequestContext
            stages.end("refused")
            const receipt = yield* sealer.sealFailed({
              orgId: principal.orgId,
              keyId: principal.keyId,
              requestId: ctx.requestId,
              status: error.status,
              errorCode: error.code
            })
            stages.end("failed-receipt")
            return yield* error.withHeaders({ "x-service-receipt-failed": Buffer.from(JSON.stringify(receipt)).toString("base64") })
          }))
      )
    })
  yield* router.add("POST", "/api/v1/chat/completions", relay("chat.completions", "completions"))
  yield* router.add("POST", "/api/v1/messages", relay("messages", "messages"))
  yield* router.add("POST", "/api/v1/embeddings", relay("embeddings", "completions"))
  yield* router.add("POST", "/api/v1/responses", relay("responses", "completions"))
  // Not billed and without receipts of any kind, failed-call receipts included (docs/relay.md, Token counting).
  yield* router.add(
    "POST",
    "/api/v1/messages/count_tokens",
    Effect.gen(function*() {
      const principal = yield* requireGatewayKey("messages", { demo: "allowed" })
      const { stages } = yield* RequestContext
      stages.end("auth")
      return yield* countTokens(principal, settings)
    })
  )
}))
