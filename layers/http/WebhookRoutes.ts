import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { WebhookDispatcher } from "../../services/WebhookDispatcher.ts"
import { Webhooks } from "../../services/Webhooks.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { invalid, rejectUnknownFields } from "../../src/http/validate.ts"
import { validateSubscription } from "../../src/webhooks/events.ts"
import { checkWebhookUrl } from "../../src/webhooks/ssrf.ts"
import { requirePortal } from "./auth.ts"
import { readDocumentedBody } from "./body.ts"
import { webhookSettings } from "../webhooks/settings.ts"
import { apiRoute } from "./api/apiRoutes.ts"

const MANAGE = "webhooks.manage"
const READ = "webhooks.read"
const MAX_URL_LENGTH = 2048
const MAX_EVENTS = 64
const DELIVERY_STATUSES = ["pending", "retrying", "delivered", "dead"]

/** Reads need `webhooks.read` or `webhooks.manage` (or `ability:admin`); 403 insufficient_ability otherwise. */
const requireRead = Effect.gen(function*() {
  const principal = yield* requirePortal(undefined)
  const granted = principal.abilities
  if (granted.includes(READ) || granted.includes(MANAGE) || granted.includes("ability:admin")) return principal
  return yield* new ApiError({
    status: 403,
    code: "insufficient_ability",
    message: `This portal token lacks "${READ}" (or "${MANAGE}").`,
    extra: { type: "permission_error", required: [READ], granted }
  })
})
const requireManage = requirePortal(MANAGE)

/** Numeric ids only; anything else cannot name a row, so it is 404 like an unknown id. */
const idParam = (name: string) =>
  Effect.gen(function*() {
    const raw = (yield* HttpRouter.params)[name]
    if (raw === undefined || !/^[1-9][0-9]{0,14}$/.test(raw)) {
      return yield* new ApiError({ status: 404, code: "not_found", message: `No webhook ${name === "id" ? "resource" : name} with this id.` })
    }
    return Number(raw)
  })

const validateUrl = (value: unknown, allowLoopback: boolean): string | ApiError => {
  if (typeof value !== "string" || value === "") return invalid("url", `"url" must be a non-empty string.`)
  if (value.length > MAX_URL_LENGTH) return invalid("url", `"url" must be at most ${MAX_URL_LENGTH} characters.`)
  // https only (production: true always); WEBHOOK_ALLOW_LOOPBACK=1 lets plain-http 127.0.0.1 / [::1] through for tests.
  const checked = checkWebhookUrl(value, { production: true, allowLoopback })
  if (!checked.ok) {
    return new ApiError({
      status: 400,
      code: "url_not_allowed",
      message: checked.reason === "https_required"
        ? "Webhook URLs must use https."
        : `Webhooks cannot be delivered to this URL (${checked.reason}).`,
      extra: { reason: checked.reason, details: { path: "url" } }
    })
  }
  return checked.url.toString()
}

const validateEvents = (value: unknown): ReadonlyArray<string> | ApiError => {
  if (!Array.isArray(value) || value.length === 0) {
    return invalid("events", `"events" must be a non-empty array of event names, "*" or "prefix.*".`)
  }
  if (value.length > MAX_EVENTS) return invalid("events", `"events" may hold at most ${MAX_EVENTS} entries.`)
  const unknown = validateSubscription(value)
  if (unknown.length > 0) {
    return new ApiError({
      status: 400,
      code: "invalid_request",
      message: `Unknown event names: ${unknown.join(", ")}. Use names of the event catalogue, "*" or "<namespace>.*".`,
      extra: { details: { path: "events", unknown } }
    })
  }
  return [...new Set(value as Array<string>)]
}

const noStore = { "cache-control": "no-store" }

/**
 * Webhook management (docs/webhooks.md): endpoints, secrets, test events, pausing and resuming, the delivery
 * log and replay. Every route is scoped to the portal token's organisation.
 */
export const WebhookRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const webhooks = yield* Webhooks
  const config = yield* AppConfig
  const dispatcher = yield* Effect.serviceOption(WebhookDispatcher)
  const { allowLoopback } = webhookSettings(config)
  const wake = dispatcher._tag === "Some" ? dispatcher.value.wake : Effect.void

  yield* router.add("POST", "/api/v1/webhooks/endpoints", Effect.gen(function*() {
    const principal = yield* requireManage
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/webhooks/endpoints"))
    const unknownField = rejectUnknownFields(body, ["url", "events"])
    if (unknownField) return yield* unknownField
    const url = validateUrl(body.url, allowLoopback)
    if (url instanceof ApiError) return yield* url
    const events = validateEvents(body.events)
    if (events instanceof ApiError) return yield* events
    const { endpoint, secret } = yield* webhooks.createEndpoint(principal.orgId, { url, events })
    return HttpServerResponse.jsonUnsafe({ ...endpoint, secret }, { status: 201, headers: noStore })
  }))

  yield* router.add("GET", "/api/v1/webhooks/endpoints", Effect.gen(function*() {
    const principal = yield* requireRead
    return HttpServerResponse.jsonUnsafe({ endpoints: yield* webhooks.listEndpoints(principal.orgId) }, { headers: noStore })
  }))

  yield* router.add("GET", "/api/v1/webhooks/endpoints/:id", Effect.gen(function*() {
    const principal = yield* requireRead
    return HttpServerResponse.jsonUnsafe(yield* webhooks.getEndpoint(principal.orgId, yield* idParam("id")), { headers: noStore })
  }))

  yield* router.add("PATCH", "/api/v1/webhooks/endpoints/:id", Effect.gen(function*() {
    const principal = yield* requireManage
    const id = yield* idParam("id")
    const body = yield* readDocumentedBody(apiRoute("PATCH", "/api/v1/webhooks/endpoints/:id"))
    const unknownField = rejectUnknownFields(body, ["url", "events"])
    if (unknownField) return yield* unknownField
    const url = body.url === undefined ? undefined : validateUrl(body.url, allowLoopback)
    if (url instanceof ApiError) return yield* url
    const events = body.events === undefined ? undefined : validateEvents(body.events)
    if (events instanceof ApiError) return yield* events
    return HttpServerResponse.jsonUnsafe(yield* webhooks.updateEndpoint(principal.orgId, id, { url, events }), { headers: noStore })
  }))

  yield* router.add("DELETE", "/api/v1/webhooks/endpoints/:id", Effect.gen(function*() {
    const principal = yield* requireManage
    yield* webhooks.deleteEndpoint(principal.orgId, yield* idParam("id"))
    return HttpServerResponse.empty({ status: 204 })
  }))

  yield* router.add("POST", "/api/v1/webhooks/endpoints/:id/rotate", Effect.gen(function*() {
    const principal = yield* requireManage
    const { endpoint, secret } = yield* webhooks.rotateSecret(principal.orgId, yield* idParam("id"))
    return HttpServerResponse.jsonUnsafe({ ...endpoint, secret }, { headers: noStore })
  }))

  yield* router.add("POST", "/api/v1/webhooks/endpoints/:id/resume", Effect.gen(function*() {
    const principal = yield* requireManage
    const endpoint = yield* webhooks.resumeEndpoint(principal.orgId, yield* idParam("id"))
    yield* wake
    return HttpServerResponse.jsonUnsafe(endpoint, { headers: noStore })
  }))

  yield* router.add("POST", "/api/v1/webhooks/endpoints/:id/test", Effect.gen(function*() {
    const principal = yield* requireManage
    const delivery = yield* webhooks.sendTest(principal.orgId, yield* idParam("id"))
    yield* wake
    return HttpServerResponse.jsonUnsafe(delivery, { status: 202, headers: noStore })
  }))

  yield* router.add("GET", "/api/v1/webhooks/deliveries", Effect.gen(function*() {
    const principal = yield* requireRead
    const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    const positive = (name: string): number | undefined | ApiError => {
      const raw = search.get(name)
      if (raw === null) return undefined
      return /^[1-9][0-9]{0,14}$/.test(raw) ? Number(raw) : invalid(name, `"${name}" must be a positive integer.`)
    }
    const limit = positive("limit")
    if (limit instanceof ApiError) return yield* limit
    const before = positive("before")
    if (before instanceof ApiError) return yield* before
    const endpointId = positive("endpoint_id")
    if (endpointId instanceof ApiError) return yield* endpointId
    const status = search.get("status") ?? undefined
    if (status !== undefined && !DELIVERY_STATUSES.includes(status)) {
      return yield* invalid("status", `"status" must be one of ${DELIVERY_STATUSES.join(", ")}.`)
    }
    const deliveries = yield* webhooks.listDeliveries(principal.orgId, {
      limit: Math.min(limit ?? 50, 200),
      before,
      endpointId,
      status
    })
    return HttpServerResponse.jsonUnsafe({ deliveries }, { headers: noStore })
  }))

  yield* router.add("GET", "/api/v1/webhooks/deliveries/:id", Effect.gen(function*() {
    const principal = yield* requireRead
    return HttpServerResponse.jsonUnsafe(yield* webhooks.getDelivery(principal.orgId, yield* idParam("id")), { headers: noStore })
  }))

  yield* router.add("POST", "/api/v1/webhooks/deliveries/:id/replay", Effect.gen(function*() {
    const principal = yield* requireManage
    const delivery = yield* webhooks.replayDelivery(principal.orgId, yield* idParam("id"))
    yield* wake
    return HttpServerResponse.jsonUnsafe(delivery, { status: 201, headers: noStore })
  }))
}))
