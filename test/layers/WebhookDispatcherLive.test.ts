import { Exit, Layer, Scope } from "effect"
import Stripe from "stripe"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { WebhookLookup } from "../../services/WebhookDispatcher.ts"
import { webhookDispatcherLayer } from "../../layers/WebhookDispatcherLive.ts"
import { verifyV0, verifyV1 } from "../../sdks/typescript/src/wire/webhooks/receiver.ts"
import type { LookupAll } from "../../src/webhooks/ssrf.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { api, orgWithToken, recordEvent, type Receiver, sleep, startReceiver, waitFor } from "./webhookTestKit.ts"

const stripe = new Stripe("sk_test_x")
const SCHEDULE = [0, 100, 150, 200, 250, 300, 350]
const TIMEOUT_MS = 400

// A real gateway with its own dispatcher, loopback receivers allowed (test setting), a compressed retry
// schedule and a short receiver timeout (WEBHOOK_TIMEOUT_MS replaces the spec's 8 s in tests only).
let gw: TestGateway
let org: { orgId: string; token: string }
const receivers: Array<Receiver> = []
beforeAll(async () => {
  gw = await startTestGateway({
    WEBHOOK_ALLOW_LOOPBACK: "1",
    WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE.join(","),
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_POLL_MS: "50"
  })
})
// Every test works in a fresh organisation, so its events reach only the endpoints it created.
beforeEach(async () => {
  org = await orgWithToken(gw, ["webhooks.manage"])
})
afterAll(async () => {
  await gw.close()
  for (const receiver of receivers) await receiver.close()
})

const receiver = async (answer?: Parameters<typeof startReceiver>[0]) => {
  const started = await startReceiver(answer)
  receivers.push(started)
  return started
}

const createEndpoint = async (url: string, events: Array<string>, token = org.token) => {
  const res = await api(gw, token, "POST", "/api/v1/webhooks/endpoints", { url, events })
  expect(res.status).toBe(201)
  return res.json as { id: number; secret: string }
}

const deliveryOf = async (eventId: string) => {
  const rows = await gw.query<{ id: string }>("SELECT id::text AS id FROM webhook_deliveries WHERE event_id = $1", eventId)
  if (rows.length !== 1) return undefined
  return (await api(gw, org.token, "GET", `/api/v1/webhooks/deliveries/${rows[0]!.id}`)).json
}

const settled = (eventId: string, timeoutMs = 10_000) =>
  waitFor(async () => {
    const delivery = await deliveryOf(eventId)
    return delivery !== undefined && (delivery.status === "delivered" || delivery.status === "dead") ? delivery : undefined
  }, timeoutMs, `delivery of ${eventId} to settle`)

describe("signed deliveries", () => {
  it("delivers an outbox event with every header, and Stripe's verifier accepts the v1 signature", async () => {
    const hook = await receiver()
    const endpoint = await createEndpoint(hook.url, ["key.*"])
    const eventId = await recordEvent(gw, org.orgId, "key.created", { key_id: "k_1", key_prefix: "svc_abcdef" })
    const [got] = await waitFor(() => hook.forEvent(eventId).length > 0 && hook.forEvent(eventId), 10_000, "the delivery")
    const h = got!.headers
    const nowMs = Date.now()

    expect(stripe.webhooks.signature!.verifyHeader(got!.rawBody, h["x-service-signature"] as string, endpoint.secret, 300, undefined, nowMs)).toBe(true)
    expect(() => stripe.webhooks.signature!.verifyHeader(got!.rawBody, h["x-service-signature"] as string, "whsec_wrong", 300, undefined, nowMs)).toThrow()
    const nowSeconds = Math.floor(nowMs / 1000)
    expect(await verifyV1({ header: h["x-service-signature"] as string, rawBody: got!.rawBody, secret: endpoint.secret, nowSeconds })).toEqual({ ok: true })
    expect(await verifyV0({ header: h["x-service-webhook-signature"] as string, rawBody: got!.rawBody, secret: endpoint.secret, nowSeconds })).toEqual({ ok: true })

    expect(got!.body).toEqual({ event: "key.created", event_id: eventId, timestamp: got!.body.timestamp, data: { key_id: "k_1", key_prefix: "svc_abcdef" } })
    expect(Math.abs(got!.body.timestamp - nowSeconds)).toBeLessThan(10)
    expect(h["content-type"]).toBe("application/json")
    expect(h["user-agent"]).toBe("Service-Webhook/1.0")
    expect(h["idempotency-key"]).toBe(eventId)
    expect(h["x-service-webhook-event-id"]).toBe(eventId)
    expect(eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(h["x-service-webhook-event"]).toBe("key.created")
    expect(h["x-service-webhook-signature-alg"]).toBe("HMAC-SHA256")
    expect(h["x-service-webhook-timestamp"]).toBe(String(got!.body.timestamp))
    expect(h["x-service-signature"]).toMatch(new RegExp(`^t=${got!.body.timestamp},v1=[0-9a-f]{64}$`))
    expect(h["x-service-webhook-attempt"]).toBe("1")

    const delivery = await settled(eventId)
    expect(delivery).toMatchObject({ status: "delivered", attempt_count: 1, last_http_code: 200, last_error: null, endpoint_id: endpoint.id })
    expect(delivery.attempts).toHaveLength(1)
    expect(h["x-service-webhook-delivery-id"]).toBe(String(delivery.attempts[0].id))
    expect(delivery.attempts[0]).toMatchObject({ attempt: 1, http_code: 200, error: null })
    const outbox = await gw.query<{ fanned: boolean }>("SELECT fanned_out_at IS NOT NULL AS fanned FROM outbox_events WHERE id = $1", eventId)
    expect(outbox).toEqual([{ fanned: true }])
  })

  it("fans out only to active endpoints of the event's organisation whose subscription matches", async () => {
    const subscribed = await receiver()
    const unsubscribed = await receiver()
    const foreign = await receiver()
    await createEndpoint(subscribed.url, ["billing.credit_added"])
    await createEndpoint(unsubscribed.url, ["key.*", "chain.broken"])
    const stranger = await orgWithToken(gw, ["webhooks.manage"], "another org")
    await createEndpoint(foreign.url, ["*"], stranger.token)
    const eventId = await recordEvent(gw, org.orgId, "billing.credit_added", { amount_micros: 5_000_000 })
    await waitFor(() => subscribed.forEvent(eventId).length === 1, 10_000, "the subscribed delivery")
    await settled(eventId)
    await sleep(300)
    expect(unsubscribed.received).toHaveLength(0)
    expect(foreign.received).toHaveLength(0)
    const rows = await gw.query("SELECT 1 FROM webhook_deliveries WHERE event_id = $1", eventId)
    expect(rows).toHaveLength(1)
  })
})

describe("retry schedule and the delivery state table", () => {
  it("retries 500s on the (compressed) schedule and logs every attempt with its HTTP code", async () => {
    const hook = await receiver((_delivery, previous) => (previous < 2 ? 500 : 200))
    await createEndpoint(hook.url, ["key.revoked"])
    const eventId = await recordEvent(gw, org.orgId, "key.revoked", { key_id: "k_2" })
    const delivery = await settled(eventId)
    expect(delivery).toMatchObject({ status: "delivered", attempt_count: 3, last_http_code: 200 })
    expect(delivery.attempts.map((a: { attempt: number; http_code: number; error: string | null }) => [a.attempt, a.http_code, a.error]))
      .toEqual([[1, 500, null], [2, 500, null], [3, 200, null]])
    const got = hook.forEvent(eventId)
    expect(got.map((r) => r.headers["x-service-webhook-attempt"])).toEqual(["1", "2", "3"])
    expect(got.map((r) => r.headers["x-service-webhook-delivery-id"])).toEqual(delivery.attempts.map((a: { id: number }) => String(a.id)))
    expect(new Set(got.map((r) => r.headers["idempotency-key"]))).toEqual(new Set([eventId]))
    // Gaps follow the schedule: attempt n+1 waits at least SCHEDULE[n] after attempt n's answer.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(SCHEDULE[1]! - 5)
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(SCHEDULE[2]! - 5)
  })

  it("marks a delivery dead after the 7th failed attempt, with attempt_count 7 and no 8th attempt", async () => {
    const hook = await receiver(() => 500)
    await createEndpoint(hook.url, ["chain.broken"])
    const eventId = await recordEvent(gw, org.orgId, "chain.broken", { chain_id: "c" })
    const delivery = await settled(eventId, 20_000)
    expect(delivery).toMatchObject({ status: "dead", attempt_count: 7, last_http_code: 500, last_error: "receiver answered HTTP 500", next_attempt_at: null })
    expect(delivery.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7])
    await sleep(SCHEDULE[6]! + 300)
    expect(hook.forEvent(eventId).map((r) => r.headers["x-service-webhook-attempt"])).toEqual(["1", "2", "3", "4", "5", "6", "7"])
  })

  it("treats 410 as dead and pauses the endpoint; a paused endpoint gets nothing until resumed", async () => {
    let gone = true
    const hook = await receiver(() => (gone ? 410 : 200))
    const endpoint = await createEndpoint(hook.url, ["*"])
    const first = await recordEvent(gw, org.orgId, "user.created", { user_id: "u1" })
    expect(await settled(first)).toMatchObject({ status: "dead", attempt_count: 1, last_http_code: 410 })
    const paused = await api(gw, org.token, "GET", `/api/v1/webhooks/endpoints/${endpoint.id}`)
    expect(paused.json).toMatchObject({ status: "paused", paused_reason: "the receiver answered 410 Gone" })

    gone = false
    const test = await api(gw, org.token, "POST", `/api/v1/webhooks/endpoints/${endpoint.id}/test`)
    await sleep(400)
    expect(hook.forEvent(test.json.event_id)).toHaveLength(0)
    const resumed = await api(gw, org.token, "POST", `/api/v1/webhooks/endpoints/${endpoint.id}/resume`)
    expect(resumed.json).toMatchObject({ status: "active", paused_reason: null })
    expect(await settled(test.json.event_id)).toMatchObject({ status: "delivered", attempt_count: 1 })
    expect(hook.forEvent(first)).toHaveLength(1)
  })

  it("treats any other 4xx as dead with no retry, leaving the endpoint active", async () => {
    const hook = await receiver(() => 400)
    const endpoint = await createEndpoint(hook.url, ["user.deleted"])
    const eventId = await recordEvent(gw, org.orgId, "user.deleted", { user_id: "u2" })
    expect(await settled(eventId)).toMatchObject({ status: "dead", attempt_count: 1, last_http_code: 400, last_error: "receiver answered HTTP 400" })
    await sleep(SCHEDULE[1]! + 300)
    expect(hook.forEvent(eventId)).toHaveLength(1)
    expect((await api(gw, org.token, "GET", `/api/v1/webhooks/endpoints/${endpoint.id}`)).json.status).toBe("active")
  })

  it("retries after a timeout (no answer within WEBHOOK_TIMEOUT_MS) and after a network failure", async () => {
    const hook = await receiver((_delivery, previous) => (previous === 0 ? "hang" : 204))
    await createEndpoint(hook.url, ["org.member_added"])
    const slow = await recordEvent(gw, org.orgId, "org.member_added", { user_id: "u3" })
    const delivered = await settled(slow)
    expect(delivered).toMatchObject({ status: "delivered", attempt_count: 2, last_http_code: 204 })
    expect(delivered.attempts[0]).toMatchObject({ attempt: 1, http_code: null, error: `timeout: no answer within ${TIMEOUT_MS} ms` })
    expect(delivered.attempts[0].duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5)

    // A port nobody listens on: connection refused is a network failure, retried; after 7 it is dead.
    const closed = await startReceiver()
    const deadUrl = closed.url
    await closed.close()
    await createEndpoint(deadUrl, ["billing.invoice_paid"])
    const refused = await recordEvent(gw, org.orgId, "billing.invoice_paid", { invoice: "i1" })
    const dead = await settled(refused, 20_000)
    expect(dead).toMatchObject({ status: "dead", attempt_count: 7, last_http_code: null, last_error: "network: ECONNREFUSED" })
    expect(dead.attempts.every((a: { error: string }) => a.error === "network: ECONNREFUSED")).toBe(true)
  })
})

describe("rotation, test events and replay", () => {
  it("uses the new secret from the moment of rotation: the next delivery verifies only with it", async () => {
    const hook = await receiver()
    const endpoint = await createEndpoint(hook.url, ["key.*"])
    const before = await recordEvent(gw, org.orgId, "key.created", { key_id: "before" })
    await settled(before)
    const rotated = await api(gw, org.token, "POST", `/api/v1/webhooks/endpoints/${endpoint.id}/rotate`)
    const after = await recordEvent(gw, org.orgId, "key.created", { key_id: "after" })
    await settled(after)
    const check = async (eventId: string, secret: string) => {
      const got = hook.forEvent(eventId)[0]!
      return (await verifyV1({ header: got.headers["x-service-signature"] as string, rawBody: got.rawBody, secret, nowSeconds: Math.floor(Date.now() / 1000) })).ok
    }
    expect(await check(before, endpoint.secret)).toBe(true)
    expect(await check(after, rotated.json.secret)).toBe(true)
    expect(await check(after, endpoint.secret)).toBe(false)
  })

  it("sends webhook.test to the endpoint even when it does not subscribe to it", async () => {
    const hook = await receiver()
    const endpoint = await createEndpoint(hook.url, ["receipt.signed"])
    const test = await api(gw, org.token, "POST", `/api/v1/webhooks/endpoints/${endpoint.id}/test`)
    expect(test.status).toBe(202)
    const [got] = await waitFor(() => hook.forEvent(test.json.event_id).length > 0 && hook.forEvent(test.json.event_id))
    expect(got!.body.event).toBe("webhook.test")
    expect(got!.body.event_id).toMatch(/^test-/)
    expect(got!.headers["idempotency-key"]).toBe(got!.body.event_id)
    expect(got!.body.data.endpoint_id).toBe(endpoint.id)
    expect(Number.isInteger(got!.body.data.endpoint_id)).toBe(true)
    expect(new Date(got!.body.data.sent_at as string).toISOString()).toBe(got!.body.data.sent_at)
    expect(stripe.webhooks.signature!.verifyHeader(got!.rawBody, got!.headers["x-service-signature"] as string, endpoint.secret, 300)).toBe(true)
  })

  it("replays a dead delivery as a new row with a replay- event id; the original row is unchanged", async () => {
    let accept = false
    const hook = await receiver(() => (accept ? 200 : 422))
    await createEndpoint(hook.url, ["key.rotated"])
    const eventId = await recordEvent(gw, org.orgId, "key.rotated", { key_id: "k9" })
    const original = await settled(eventId)
    expect(original.status).toBe("dead")
    accept = true
    const replay = await api(gw, org.token, "POST", `/api/v1/webhooks/deliveries/${original.id}/replay`)
    expect(replay.status).toBe(201)
    expect(replay.json.event_id).toMatch(/^replay-[0-9a-f-]{36}$/)
    const replayed = await settled(replay.json.event_id)
    expect(replayed).toMatchObject({ status: "delivered", replay_of: original.id, event: "key.rotated" })
    const got = hook.forEvent(replay.json.event_id)
    expect(got).toHaveLength(1)
    expect(got[0]!.body.data).toEqual({ key_id: "k9" })
    expect(got[0]!.headers["idempotency-key"]).toBe(replay.json.event_id)
    const again = (await api(gw, org.token, "GET", `/api/v1/webhooks/deliveries/${original.id}`)).json
    expect(again).toMatchObject({ status: "dead", event_id: eventId, attempt_count: 1, last_http_code: 422 })
  })
})

/** Builds an extra dispatcher on a gateway's runtime (same SqlClient), optionally with its own DNS resolver. */
const extraDispatcher = async (target: TestGateway, lookup?: LookupAll) => {
  const scope = await target.runtime.runPromise(Scope.make())
  const layer = lookup === undefined ? webhookDispatcherLayer : webhookDispatcherLayer.pipe(Layer.provide(Layer.succeed(WebhookLookup, { lookup })))
  await target.runtime.runPromise(Layer.buildWithScope(layer, scope))
  return { stop: () => target.runtime.runPromise(Scope.close(scope, Exit.void)) }
}

describe("SSRF guard at delivery time and several dispatchers", () => {
  // No dispatcher of its own (WEBHOOK_DISPATCHER=off): the dispatchers under test are built here.
  let bare: TestGateway
  let bareOrg: { orgId: string; token: string }
  beforeAll(async () => {
    bare = await startTestGateway({
      WEBHOOK_DISPATCHER: "off",
      WEBHOOK_ALLOW_LOOPBACK: "1",
      WEBHOOK_RETRY_SCHEDULE_MS: "0,50,50,50,50,50,50",
      WEBHOOK_POLL_MS: "20"
    })
    bareOrg = await orgWithToken(bare, ["webhooks.manage"])
  })
  afterAll(() => bare.close())

  const bareDelivery = (eventId: string) =>
    waitFor(async () => {
      // The first attempt's result is recorded (a claim alone only counts the attempt).
      const rows = await bare.query<{ status: string; attempt_count: number; last_error: string | null }>(
        "SELECT status, attempt_count, last_error FROM webhook_deliveries WHERE event_id = $1 AND (last_error IS NOT NULL OR last_http_code IS NOT NULL)",
        eventId
      )
      return rows[0]
    }, 10_000, "an attempt's result")

  it("refuses, before connecting, a name that resolves to a private address (and a mixed answer)", async () => {
    const hook = await receiver()
    const answers: Record<string, LookupAll> = {}
    const lookup: LookupAll = (name) => (answers[name] ?? (() => Promise.reject(Object.assign(new Error("no"), { code: "ENOTFOUND" }))))(name)
    answers["private.hooks.test"] = async () => [{ address: "10.0.0.1", family: 4 }]
    // Loopback is allowed by the test setting, so without the guard this name would reach the receiver.
    answers["mixed.hooks.test"] = async () => [{ address: "127.0.0.1", family: 4 }, { address: "169.254.169.254", family: 4 }]
    answers["control.hooks.test"] = async () => [{ address: "127.0.0.1", family: 4 }]
    const dispatcher = await extraDispatcher(bare, lookup)
    try {
      const create = (host: string, event: string) =>
        api(bare, bareOrg.token, "POST", "/api/v1/webhooks/endpoints", { url: `https://${host}:${hook.port}/hook`, events: [event] })
      expect((await create("private.hooks.test", "user.created")).status).toBe(201)
      expect((await create("mixed.hooks.test", "user.deleted")).status).toBe(201)
      const privateEvent = await recordEvent(bare, bareOrg.orgId, "user.created", { user_id: "x" })
      const mixedEvent = await recordEvent(bare, bareOrg.orgId, "user.deleted", { user_id: "y" })
      expect(await bareDelivery(privateEvent)).toMatchObject({ last_error: "network: ssrf_refused:private (10.0.0.1)" })
      expect(await bareDelivery(mixedEvent)).toMatchObject({ last_error: "network: ssrf_refused:metadata (169.254.169.254)" })
      expect(hook.connections()).toBe(0)

      // Control: the same set-up with a name resolving to the allowed loopback does open a connection
      // (TLS then fails against the plain-http receiver), so a zero above really means "never connected".
      expect((await create("control.hooks.test", "org.member_added")).status).toBe(201)
      const controlEvent = await recordEvent(bare, bareOrg.orgId, "org.member_added", { user_id: "z" })
      await bareDelivery(controlEvent)
      expect(hook.connections()).toBeGreaterThan(0)
    } finally {
      await dispatcher.stop()
    }
  })

  it("resolves DNS again before each attempt: a name rebound to a private address is refused on retry", async () => {
    let calls = 0
    const hook = await receiver(() => 503)
    const lookup: LookupAll = async (name) => {
      if (name !== "rebind.hooks.test") throw Object.assign(new Error("unknown name"), { code: "ENOTFOUND" })
      return ++calls === 1 ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "10.0.0.1", family: 4 }]
    }
    const plain = await api(bare, bareOrg.token, "POST", "/api/v1/webhooks/endpoints", {
      url: `https://rebind.hooks.test:${hook.port}/hook`,
      events: ["chain.repaired"]
    })
    expect(plain.status).toBe(201)
    const dispatcher = await extraDispatcher(bare, lookup)
    try {
      const eventId = await recordEvent(bare, bareOrg.orgId, "chain.repaired", { chain_id: "c" })
      const attempts = await waitFor(async () => {
        const rows = await bare.query<{ attempt: number; error: string | null }>(
          "SELECT a.attempt, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1 AND a.finished_at IS NOT NULL ORDER BY a.attempt",
          eventId
        )
        return rows.length >= 2 ? rows : undefined
      })
      expect(attempts[0]!.error).not.toMatch(/ssrf_refused/)
      expect(attempts[1]!.error).toBe("network: ssrf_refused:private (10.0.0.1)")
      expect(calls).toBeGreaterThanOrEqual(2)
      const connectionsAfterFirst = hook.connections()
      expect(connectionsAfterFirst).toBe(1)
    } finally {
      await dispatcher.stop()
    }
  })

  it("two dispatchers sharing one database send each attempt of each event exactly once", async () => {
    const hook = await receiver((_delivery, previous) => (previous === 0 ? 500 : 200))
    const stranger = await orgWithToken(bare, ["webhooks.manage"], "dispatch race org")
    const created = await api(bare, stranger.token, "POST", "/api/v1/webhooks/endpoints", { url: hook.url, events: ["receipt.signed"] })
    expect(created.status).toBe(201)
    const first = await extraDispatcher(bare)
    const second = await extraDispatcher(bare)
    try {
      const eventIds: Array<string> = []
      for (let i = 0; i < 40; i++) eventIds.push(await recordEvent(bare, stranger.orgId, "receipt.signed", { seq: i }))
      await waitFor(async () => {
        const rows = await bare.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'",
          created.json.id
        )
        return rows[0]!.n === "40"
      }, 20_000, "40 delivered")
      await sleep(300)
      const seen = new Map<string, number>()
      for (const got of hook.received) {
        const key = `${got.body.event_id}#${got.headers["x-service-webhook-attempt"]}`
        seen.set(key, (seen.get(key) ?? 0) + 1)
      }
      expect(hook.received).toHaveLength(80)
      for (const eventId of eventIds) {
        expect(seen.get(`${eventId}#1`), eventId).toBe(1)
        expect(seen.get(`${eventId}#2`), eventId).toBe(1)
      }
      const attempts = await bare.query<{ n: string; ids: string }>(
        "SELECT count(*)::text AS n, count(DISTINCT a.id)::text AS ids FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1",
        created.json.id
      )
      expect(attempts[0]).toEqual({ n: "80", ids: "80" })
      expect(new Set(hook.received.map((r) => r.headers["x-service-webhook-delivery-id"])).size).toBe(80)
    } finally {
      await first.stop()
      await second.stop()
    }
  })
})

describe("fan-out rounds", () => {
  // A dispatcher without a backlog waits WEBHOOK_POLL_MS between rounds (so relayed calls' receipt.signed events
  // are fanned out in batches, not one durable commit per event); a backlog must still drain without those waits.
  let quiet: TestGateway
  let quietOrg: string
  beforeAll(async () => {
    quiet = await startTestGateway({ WEBHOOK_POLL_MS: "2000" })
    quietOrg = (await orgWithToken(quiet, ["webhooks.manage"])).orgId
  })
  afterAll(() => quiet.close())

  /** The distinct fan-out times (a round's transaction time) of these events, once all are fanned out. */
  const roundsOf = (ids: ReadonlyArray<string>) =>
    waitFor(async () => {
      const rows = await quiet.query<{ at: string | null }>(
        "SELECT fanned_out_at::text AS at FROM outbox_events WHERE id = ANY($1::text[])",
        ids
      )
      if (rows.length !== ids.length || rows.some((r) => r.at === null)) return undefined
      return [...new Set(rows.map((r) => r.at!))].sort()
    }, 15_000, "every event fanned out")

  it("a backlog larger than one batch is fanned out in back-to-back rounds", async () => {
    const [row] = await quiet.query<{ ids: Array<string> }>(`
      WITH made AS (
        INSERT INTO outbox_events (id, org_id, event, data)
        SELECT gen_random_uuid()::text, $1, 'receipt.signed', jsonb_build_object('n', n) FROM generate_series(1, 250) n
        RETURNING id
      ) SELECT array_agg(id) AS ids FROM made`, quietOrg)
    const rounds = await roundsOf(row!.ids)
    // 100 events per batch: at least 3 rounds, and no 2 s poll wait between them (one wait alone would make the
    // span 2 s or more; the margin below that is for a loaded machine, where a round may take a few hundred ms).
    expect(rounds.length).toBeGreaterThanOrEqual(3)
    const spanMs = new Date(rounds[rounds.length - 1]!).getTime() - new Date(rounds[0]!).getTime()
    expect(spanMs).toBeLessThan(2000)
  })
})
