import { Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Accounts } from "../../services/Accounts.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { Keys } from "../../services/Keys.ts"
import { RateWindows } from "../../services/RateWindows.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { clientAddress, networkOf } from "../../src/http/clientNetwork.ts"
import { invalid, isPlausibleEmail, optionalString, rejectUnknownFields } from "../../src/http/validate.ts"
import { readDocumentedBody } from "./body.ts"
import { apiRoute } from "./api/apiRoutes.ts"

const HOUR = 3_600_000
const DAY = 86_400_000
/** The spec's guard rails: at most 5 issuances per hour and 20 per day per network. */
export const ISSUANCE_LIMITS = { perHour: 5, perDay: 20 } as const
export const FREE_TIER_RPM = 20

const validate = (body: Record<string, unknown>) => {
  const unknownField = rejectUnknownFields(body, ["email", "name"])
  if (unknownField) return unknownField
  const email = optionalString(body, "email", 254)
  if (email instanceof ApiError) return email
  if (email !== undefined && !isPlausibleEmail(email)) return invalid("email", `"email" is not an e-mail address.`)
  const name = optionalString(body, "name", 100)
  if (name instanceof ApiError) return name
  return { email, name }
}

/** POST /api/v1/self-service/key: a free-tier key for anyone, rate limited per network. */
export const SelfServiceRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const config = yield* AppConfig
  const keys = yield* Keys
  const windows = yield* RateWindows
  const accounts = yield* Accounts
  yield* router.add("POST", "/api/v1/self-service/key", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const input = validate(yield* readDocumentedBody(apiRoute("POST", "/api/v1/self-service/key")))
    if (input instanceof ApiError) return yield* input

    const network = networkOf(
      clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], config.trustedProxies)
    )
    const [hour, day] = yield* windows.hitAll([
      { key: `ss:h:${network}`, windowMs: HOUR, limit: ISSUANCE_LIMITS.perHour },
      { key: `ss:d:${network}`, windowMs: DAY, limit: ISSUANCE_LIMITS.perDay }
    ])
    if (!hour.allowed || !day.allowed) {
      const retryAfterMs = Math.max(hour.retryAfterMs, day.retryAfterMs)
      return yield* new ApiError({
        status: 429,
        code: "rate_limited",
        message: `At most ${ISSUANCE_LIMITS.perHour} keys per hour and ${ISSUANCE_LIMITS.perDay} per day may be issued per network.`,
        headers: { "retry-after": String(Math.ceil(retryAfterMs / 1000)) }
      })
    }

    const issued = yield* keys.issueSelfService({ email: input.email, name: input.name })
    // The account exists (unverified) once issuance committed; the verification link (worth the $2 trial credit)
    // goes out now. A mail failure does not undo the key: the user can ask again at /api/v1/account/verification.
    if (input.email !== undefined) {
      yield* accounts.sendVerification(issued.accountId).pipe(
        Effect.catchCause((cause) => Effect.logWarning("verification mail not sent", cause))
      )
    }
    return HttpServerResponse.jsonUnsafe(
      {
        api_key: issued.apiKey,
        key_prefix: issued.keyPrefix,
        tier: "free",
        limits: {
          rate_limit_rpm: FREE_TIER_RPM,
          on_device: "On-device tokenisation (the local proxy, npm run proxy) is unlimited and free.",
          relay: "Relay calls need a positive wallet balance; a fresh key starts at $0. Verify your e-mail for $2 trial credit."
        },
        warning: "This key is shown once and cannot be recovered. Store it now."
      },
      { status: 201, headers: { "cache-control": "no-store" } }
    )
  }))
}))
