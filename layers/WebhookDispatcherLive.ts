import { Effect, Fiber, Layer, Queue } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../services/AppConfig.ts"
import { KeyEncryption } from "../services/KeyEncryption.ts"
import { WebhookDispatcher, WebhookLookup } from "../services/WebhookDispatcher.ts"
import { encodeDeliveryBody } from "../sdks/typescript/src/wire/webhooks/payload.ts"
import { classifyOutcome } from "../src/webhooks/schedule.ts"
import { deliveryHeaders } from "../sdks/typescript/src/wire/webhooks/signature.ts"
import { checkWebhookUrl, resolveAndCheck } from "../src/webhooks/ssrf.ts"
import { secretContext } from "./pg/Webhooks.ts"
import {
  type AttemptResult,
  claimDue,
  type ClaimedAttempt,
  endpointForAttempt,
  FAN_OUT_BATCH,
  fanOutPending,
  recordAttempt
} from "./pg/WebhookDeliveryStore.ts"
import { postDelivery, type PostResult } from "./webhooks/postDelivery.ts"
import { webhookSettings } from "./webhooks/settings.ts"

/** Extra time a claimed attempt keeps its lease beyond the receiver timeout (DNS, signing, recording). */
const LEASE_MARGIN_MS = 60_000

/**
 * The webhook dispatcher: one supervised fiber per process, started in this layer's scope and interrupted when
 * the scope closes (attempts already sent are then awaited and recorded, so a shutdown leaves none half done). Each round it fans pending outbox events out to deliveries, claims due deliveries up to
 * its free concurrency and starts one fiber per attempt; it sleeps WEBHOOK_POLL_MS when it claimed nothing and the
 * fan-out did not fill a batch (no backlog) unless woken (a test or replay queued here, or an attempt finished). Several dispatchers, in one process or
 * many, share the database safely: claims use FOR UPDATE SKIP LOCKED (see WebhookDeliveryStore).
 *
 * This variant always runs; WebhookDispatcherLive honours WEBHOOK_DISPATCHER=off.
 */
export const webhookDispatcherLayer = Layer.effect(
  WebhookDispatcher,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyEncryption
    const { lookup } = yield* WebhookLookup
    const settings = webhookSettings(config)
    const { schedule, timeoutMs, allowLoopback } = settings
    if (allowLoopback) {
      yield* Effect.logWarning("WEBHOOK_ALLOW_LOOPBACK=1: webhooks may be delivered to 127.0.0.1 and [::1] (tests only)")
    }

    const wakeups = yield* Queue.sliding<true>(1)
    const wake = Queue.offer(wakeups, true).pipe(Effect.asVoid)
    let inFlight = 0

    /** Resolve, check, sign and send; never fails: every problem is an outcome of the attempt. */
    const send = (claimed: ClaimedAttempt, url: string, secret: string) =>
      Effect.promise(async (signal): Promise<PostResult> => {
        // Checked again before every attempt: the URL may have been edited, and DNS answers change.
        const urlCheck = checkWebhookUrl(url, { production: true, allowLoopback })
        if (!urlCheck.ok) return { error: "network", detail: `ssrf_refused:${urlCheck.reason}` }
        const target = await resolveAndCheck(urlCheck.url.hostname, { allowLoopback, lookup })
        if (!target.ok) {
          const detail = target.reason.startsWith("dns_")
            ? target.reason
            : `ssrf_refused:${target.reason}${target.address === undefined ? "" : ` (${target.address})`}`
          return { error: "network", detail }
        }
        if (signal.aborted) return { error: "network", detail: "interrupted" }
        // The payload timestamp is the signing time of this attempt, so a retry hours later still passes the
        // receiver's 300-second tolerance; event, event_id and data never change.
        const payload = {
          event: claimed.event,
          event_id: claimed.eventId,
          timestamp: Math.floor(Date.now() / 1000),
          data: claimed.data
        }
        const body = encodeDeliveryBody(payload)
        const headers = await deliveryHeaders({
          secret,
          event: payload.event,
          eventId: payload.event_id,
          timestamp: payload.timestamp,
          deliveryId: claimed.attemptId,
          attempt: claimed.attempt,
          payload,
          rawBody: body
        })
        return postDelivery({ url: urlCheck.url, target, headers, body, timeoutMs, signal })
      })

    const runAttempt = (claimed: ClaimedAttempt) =>
      Effect.gen(function*() {
        const started = Date.now()
        const endpoint = yield* endpointForAttempt(sql, claimed.endpointId)
        if (endpoint === undefined) return // deleted meanwhile; its deliveries went with it
        const secret = yield* keys.open(endpoint.secret_envelope, secretContext(endpoint.org_id))
        const outcome = yield* send(claimed, endpoint.url, secret)
        const decision = classifyOutcome(
          "status" in outcome ? { status: outcome.status } : { error: outcome.error },
          claimed.attempt,
          schedule
        )
        const httpCode = "status" in outcome ? outcome.status : null
        const error = "status" in outcome ? null : `${outcome.error === "timeout" ? "timeout" : "network"}: ${outcome.detail}`
        const lastError = error ?? `receiver answered HTTP ${httpCode}`
        const result: AttemptResult = {
          httpCode,
          error,
          durationMs: Date.now() - started,
          next: decision.state === "delivered"
            ? decision
            : decision.state === "dead"
            ? { state: "dead", pauseEndpoint: decision.pauseEndpoint, lastError }
            : { state: "retrying", delayMs: decision.delayMs, lastError }
        }
        yield* recordAttempt(sql, claimed, result)
        yield* Effect.logDebug("webhook attempt").pipe(
          Effect.annotateLogs({
            delivery_id: claimed.deliveryId,
            attempt_id: claimed.attemptId,
            attempt: claimed.attempt,
            http_code: httpCode,
            error,
            next: decision.state
          })
        )
      }).pipe(
        Effect.catchCause((cause) => Effect.logError("webhook attempt could not be recorded", cause)),
        Effect.ensuring(Effect.andThen(Effect.sync(() => {
          inFlight--
        }), wake))
      )

    const round = Effect.gen(function*() {
      const fannedOut = yield* fanOutPending(sql, schedule[0]!)
      const free = settings.concurrency - inFlight
      const claimed = free > 0 ? yield* claimDue(sql, free, timeoutMs + LEASE_MARGIN_MS) : []
      for (const attempt of claimed) {
        inFlight++
        // Not tied to the layer's scope: closing it lets the attempt finish and be recorded (see below).
        yield* Effect.forkDetach(runAttempt(attempt))
      }
      // Straight into the next round only while there is a backlog (a full fan-out batch) or deliveries to send.
      // A partial batch means the outbox is drained: every relayed call adds a `receipt.signed` event, so going
      // round again at once would fan out one or two events per round, a durable commit and five statements per
      // call on the relay's own database connections. Sleeping WEBHOOK_POLL_MS lets them accumulate instead.
      return fannedOut >= FAN_OUT_BATCH || claimed.length > 0
    })

    const loop = Effect.gen(function*() {
      while (true) {
        const busy = yield* round.pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logError("webhook dispatcher round failed", cause), false))
        )
        if (!busy) yield* Queue.take(wakeups).pipe(Effect.timeoutOption(settings.pollMs))
      }
    })

    const looping = yield* Effect.forkScoped(loop)
    // Shutdown: claim nothing more, then wait for the attempts in flight (each bounded by WEBHOOK_TIMEOUT_MS) to
    // record their outcome. An attempt cut off instead would keep its lease (timeout + 60 s) before anyone retried.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Fiber.interrupt(looping)
        while (inFlight > 0) yield* Effect.sleep(10)
      })
    )
    return WebhookDispatcher.of({ wake })
  })
)

/** The dispatcher unless WEBHOOK_DISPATCHER=off, in which case `wake` does nothing and another process delivers. */
export const WebhookDispatcherLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) =>
    webhookSettings(config).dispatcherEnabled
      ? webhookDispatcherLayer
      : Layer.succeed(WebhookDispatcher, WebhookDispatcher.of({ wake: Effect.void })))
)
