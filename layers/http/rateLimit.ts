import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { RateWindows } from "../../services/RateWindows.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { clientAddress, networkOf } from "../../src/http/clientNetwork.ts"

/** The caller's network (exact IPv4, IPv6 /64), honouring X-Forwarded-For only from TRUSTED_PROXIES. */
export const callerNetwork = Effect.gen(function*() {
  const config = yield* AppConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  return networkOf(clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], config.trustedProxies))
})

/** 429 `rate_limited` with Retry-After when any of the windows is exhausted (all are counted). */
export const limitOrFail = (windows: ReadonlyArray<{ readonly key: string; readonly windowMs: number; readonly limit: number }>, message: string) =>
  Effect.gen(function*() {
    const verdicts = yield* (yield* RateWindows).hitAll(windows)
    const refused = verdicts.filter((v) => !v.allowed)
    if (refused.length === 0) return
    const retryAfterMs = Math.max(...refused.map((v) => v.retryAfterMs))
    return yield* new ApiError({ status: 429, code: "rate_limited", message, headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } })
  })
