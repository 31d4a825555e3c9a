import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { DEFAULT_ENGINE_ALLOWLIST, type EngineAllowlist } from "../../src/attestation/engine-allowlist.ts"
import type { AttestationRoute } from "../../src/attestation/v3.ts"
import type { Scope } from "../../src/keys/scopes.ts"
import { relayCall } from "../relay/relayCall.ts"
import { requireGatewayKey } from "./auth.ts"

/** ENGINE_ALLOWLIST_JSON overrides the official engines: `[{"id":"relay-ts","minVersion":"0.1.0","sha256":[...]}]`. */
const engineAllowlist = (json: string | undefined): EngineAllowlist => (json ? JSON.parse(json) : DEFAULT_ENGINE_ALLOWLIST)

/**
 * The relay routes. Scopes: chat completions and embeddings need `completions`, messages needs `messages`
 * (DESIGN.md section 8).
 */
export const RelayRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const config = yield* AppConfig
  const settings = { allowlist: engineAllowlist(config.env.ENGINE_ALLOWLIST_JSON) }
  const relay = (route: AttestationRoute, scope: Scope) =>
    Effect.gen(function*() {
      const principal = yield* requireGatewayKey(scope)
      return yield* relayCall(route, principal, settings)
    })
  yield* router.add("POST", "/api/v1/chat/completions", relay("chat.completions", "completions"))
  yield* router.add("POST", "/api/v1/messages", relay("messages", "messages"))
  yield* router.add("POST", "/api/v1/embeddings", relay("embeddings", "completions"))
}))
