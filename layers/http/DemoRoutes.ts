import { Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { Keys } from "../../services/Keys.ts"
import { RateWindows } from "../../services/RateWindows.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { clientAddress, networkOf } from "../../src/http/clientNetwork.ts"
import { DEMO_KEYS_PER_NETWORK_PER_DAY, DEMO_TIER } from "../../src/keys/demo.ts"
import { readDocumentedBody } from "./body.ts"
import { invalid } from "../../src/http/validate.ts"
import { apiRoute } from "./api/apiRoutes.ts"

const DAY = 86_400_000

/**
 * POST /api/v1/demo/key: an anonymous demo key (docs/demo.md). No auth, no e-mail; $2 of credit, 24 hours, relay
 * routes only, no receipts; at most two per network per day.
 */
export const DemoRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const config = yield* AppConfig
  const keys = yield* Keys
  const windows = yield* RateWindows
  yield* router.add("POST", "/api/v1/demo/key", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // No body or `{}`: the demo takes no input.
    const extra = Object.keys(yield* readDocumentedBody(apiRoute("POST", "/api/v1/demo/key")))[0]
    if (extra !== undefined) return yield* invalid(extra, `Unknown field "${extra}". A demo key takes no input: send {} or no body.`)
    const network = networkOf(
      clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], config.trustedProxies)
    )
    const [day] = yield* windows.hitAll([{ key: `demo:d:${network}`, windowMs: DAY, limit: DEMO_KEYS_PER_NETWORK_PER_DAY }])
    if (!day.allowed) {
      return yield* new ApiError({
        status: 429,
        code: "rate_limited",
        message: `At most ${DEMO_KEYS_PER_NETWORK_PER_DAY} demo keys per day may be issued per network.`,
        headers: { "retry-after": String(Math.ceil(day.retryAfterMs / 1000)) }
      })
    }
    const issued = yield* keys.issueDemo()
    return HttpServerResponse.jsonUnsafe(
      {
        api_key: issued.apiKey,
        key_prefix: issued.keyPrefix,
        tier: DEMO_TIER,
        // Dollars and cents, as the demo shows it ("2.00"); the wallet itself counts micro-dollars.
        balance_usd: (Number(issued.balanceMicros) / 1_000_000).toFixed(2),
        expires_at: issued.expiresAt.toISOString(),
        limits: {
          relay_only: "Demo keys may call the relay routes and list models; nothing else.",
          receipts: "Demo calls are metered and debited but get no receipts."
        },
        warning: "This key is shown once and cannot be recovered."
      },
      { status: 201, headers: { "cache-control": "no-store" } }
    )
  }))
}))
