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

type Windows = ReadonlyArray<{ readonly key: string; readonly windowMs: number; readonly limit: number }>

/** Counts one event in every window: undefined when allowed, else 429 `rate_limited` with Retry-After (not failed). */
export const limitVerdict = (windows: Windows, message: string) =>
  Effect.gen(function*() {
    const verdicts = yield* (yield* RateWindows).hitAll(windows)
    const refused = verdicts.filter((v) => !v.allowed)
    if (refused.length === 0) return undefined
    const retryAfterMs = Math.max(...refused.map((v) => v.retryAfterMs))
    return new ApiError({ status: 429, code: "rate_limited", message, headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } })
  })

/** 429 `rate_limited` with Retry-After when any of the windows is exhausted (all are counted). */
export const limitOrFail = (windows: Windows, message: string) =>
  Effect.flatMap(limitVerdict(windows, message), (refused) => (refused === undefined ? Effect.void : Effect.fail(refused)))

const FIFTEEN_MINUTES = 15 * 60_000

/**
 * Password sign-in attempts, wherever the password is typed (the portal's sign-in and the OpenID provider's login
 * form count in the same windows, so one form cannot be used to go on guessing after the other refuses): 30 per 15
 * minutes per network, 10 per 15 minutes per e-mail address. Every attempt counts, right or wrong.
 */
export const signInWindows = (network: string, email: string): Windows => [
  { key: `login:n:${network}`, windowMs: FIFTEEN_MINUTES, limit: 30 },
  { key: `login:e:${email.toLowerCase()}`, windowMs: FIFTEEN_MINUTES, limit: 10 }
]
export const SIGN_IN_LIMITED = "Too many sign-in attempts; try again later."
