import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReceiptSealer } from "../../../services/ReceiptSealer.ts"
import { SealerQueue } from "../../../services/SealerQueue.ts"
import { waitFor } from "../webhookTestKit.ts"
import { attestedHeaders } from "../../support/engine.ts"
import pgSimpleQuery from "../../support/pgSimpleQuery.ts"
import { newOrg, sealInput } from "../../support/receipts.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

/**
 * The Prometheus text exposition format, line by line: a HELP or TYPE comment, or `name{labels} value`. Returns the
 * samples keyed by `name{labels}` and fails on any line of another shape.
 */
const parseExposition = (text: string) => {
  const samples = new Map<string, number>()
  const types = new Map<string, string>()
  expect(text.endsWith("\n")).toBe(true)
  for (const line of text.slice(0, -1).split("\n")) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* \S.*$/.test(line)) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,|(?=\})))*\})? (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(line)
    expect(sample, `not an exposition line: ${JSON.stringify(line)}`).not.toBeNull()
    const family = sample![1]!.replace(/_(bucket|sum|count)$/, "")
    expect(types.has(sample![1]!) || types.get(family) === "histogram", `sample before its TYPE: ${line}`).toBe(true)
    samples.set(`${sample![1]}${sample![2] ?? ""}`, Number(sample![3]))
  }
  return { samples, types }
}

const CHAT = '{method="POST",route="/api/v1/chat/completions"'

describe("GET /metrics from this host (no METRICS_TOKEN_FILE)", () => {
  // No dispatcher in this gateway: the backlog gauges and the database are read one after the other, and a fan-out
  // between the two reads (seen on a busy CI machine) would make them differ.
  const fx = useRelayFixture({ WEBHOOK_DISPATCHER: "off" })

  const scrape = async () => {
    const res = await fetch(`${fx.gw.url}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    return parseExposition(await res.text())
  }

  it("counts a relay call under its route template and 2xx, adds it to the latency histogram, and reads the backlog from the database", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const before = await scrape()
    expect(before.types.get("gateway_http_requests_total")).toBe("counter")
    expect(before.types.get("gateway_http_request_duration_seconds")).toBe("histogram")

    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Hello <EMAIL_1>" }] })
    const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(res.status).toBe(200)
    await res.text()
    expect(fx.provider.received).toHaveLength(1)
    expect((await fetch(`${fx.gw.url}/no/such/path?secret=1`)).status).toBe(404)

    const after = await scrape()
    const get = (m: typeof after, key: string) => m.samples.get(key) ?? 0
    expect(get(after, `gateway_http_requests_total${CHAT},status_class="2xx"}`) - get(before, `gateway_http_requests_total${CHAT},status_class="2xx"}`)).toBe(1)
    expect(get(after, `gateway_http_request_duration_seconds_count${CHAT}}`) - get(before, `gateway_http_request_duration_seconds_count${CHAT}}`)).toBe(1)
    expect(get(after, `gateway_http_request_duration_seconds_sum${CHAT}}`)).toBeGreaterThan(0)
    // an unmatched path is counted without its path (no unbounded label set, no query string)
    expect(get(after, 'gateway_http_requests_total{method="GET",route="unmatched",status_class="4xx"}')).toBeGreaterThanOrEqual(1)
    expect([...after.samples.keys()].some((k) => k.includes("/no/such/path") || k.includes("secret"))).toBe(false)
    // the first scrape itself is counted once it has answered
    expect(get(after, 'gateway_http_requests_total{method="GET",route="/metrics",status_class="2xx"}')).toBeGreaterThanOrEqual(1)

    // histogram buckets are cumulative and end at the count
    const buckets = [...after.samples.entries()].filter(([k]) => k.startsWith(`gateway_http_request_duration_seconds_bucket${CHAT},`)).map(([, v]) => v)
    expect(buckets.length).toBe(13)
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!).toBeGreaterThanOrEqual(buckets[i - 1]!)
    expect(buckets.at(-1)).toBe(get(after, `gateway_http_request_duration_seconds_count${CHAT}}`))

    // the webhook backlog gauges are the database's figures; the call settled, so its hold is gone
    const [db] = await fx.gw.query<{ deliveries: string; events: string }>(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying'))::text AS deliveries,
              (SELECT count(*) FROM outbox_events WHERE fanned_out_at IS NULL)::text AS events`
    )
    expect(get(after, "gateway_settlement_open_holds")).toBe(0)
    expect(after.samples.get("gateway_webhook_deliveries_backlog")).toBe(Number(db!.deliveries))
    expect(after.samples.get("gateway_webhook_events_unfanned")).toBe(Number(db!.events))
    expect(after.samples.get("gateway_metrics_database_up")).toBe(1)
  })

  it("the sealer queue gauges follow the real sealer: jobs accepted and not yet written, for one tenant, then none", async () => {
    const orgId = await newOrg(fx.gw)
    const observed = await fx.gw.runtime.runPromise(Effect.gen(function*() {
      const sealer = yield* ReceiptSealer
      const queue = yield* SealerQueue
      const fiber = yield* Effect.forkChild(Effect.all(Array.from({ length: 20 }, () => sealer.seal(sealInput(orgId))), { concurrency: "unbounded" }))
      // The largest figures seen while the seals are being written, sampled at every turn of the scheduler.
      let during = { pendingJobs: 0, activeTenants: 0 }
      for (let turn = 0; turn < 200; turn++) {
        yield* Effect.yieldNow
        const now = queue.stats()
        if (now.pendingJobs > during.pendingJobs) during = now
      }
      const sealed = yield* Fiber.join(fiber)
      // The actor lets go of the tenant right after answering its last batch.
      for (let turn = 0; turn < 100 && queue.stats().activeTenants > 0; turn++) yield* Effect.yieldNow
      return { during, after: queue.stats(), sealed: sealed.length }
    }) as Effect.Effect<{ during: { pendingJobs: number; activeTenants: number }; after: { pendingJobs: number; activeTenants: number }; sealed: number }, never, never>)
    expect(observed.sealed).toBe(20)
    // All 20 were queued at once behind the first batch (one tenant, one actor).
    expect(observed.during.pendingJobs).toBeGreaterThan(1)
    expect(observed.during.pendingJobs).toBeLessThanOrEqual(20)
    expect(observed.during.activeTenants).toBe(1)
    expect(observed.after).toEqual({ pendingJobs: 0, activeTenants: 0 })
    const { samples, types } = await scrape()
    expect(types.get("gateway_sealer_pending_jobs")).toBe("gauge")
    expect(types.get("gateway_sealer_active_tenants")).toBe("gauge")
    expect(samples.get("gateway_sealer_pending_jobs")).toBe(0)
    expect(samples.get("gateway_sealer_active_tenants")).toBe(0)
    const [rows] = await fx.gw.query<{ n: string }>("SELECT count(*)::text AS n FROM receipts_v2 WHERE org_id = $1", orgId)
    expect(rows!.n).toBe("20")
  })

  // PostgreSQL only: another connection holds the chain heads locked, so the sealer's batch waits while we scrape
  // (embedded PGlite has one connection: a held lock would hold the scrape back too).
  it.skipIf(process.env.DATABASE_URL === undefined)("scraped while the database holds the sealer back, the gauge shows the waiting jobs; after, zero", async () => {
    const orgId = await newOrg(fx.gw)
    const locked = pgSimpleQuery(fx.gw.env.DATABASE_URL!, "DO $$ BEGIN LOCK TABLE receipt_chains IN EXCLUSIVE MODE; PERFORM pg_sleep(2); END $$")
    await new Promise((resolve) => setTimeout(resolve, 200))
    const seals = fx.gw.runtime.runPromise(Effect.gen(function*() {
      const sealer = yield* ReceiptSealer
      return yield* Effect.all(Array.from({ length: 5 }, () => sealer.seal(sealInput(orgId))), { concurrency: "unbounded" })
    }) as Effect.Effect<Array<unknown>, never, never>)
    const waiting = await waitFor(async () => {
      const { samples } = await scrape()
      return samples.get("gateway_sealer_pending_jobs") === 5 && samples
    }, 1500, "5 pending sealer jobs")
    expect(waiting.get("gateway_sealer_active_tenants")).toBe(1)
    await locked
    expect(await seals).toHaveLength(5)
    const { samples } = await scrape()
    expect(samples.get("gateway_sealer_pending_jobs")).toBe(0)
    expect(samples.get("gateway_sealer_active_tenants")).toBe(0)
  })

  it("counts a call's wallet hold as open while the call is in flight, and not once it has settled", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    fx.provider.setBehaviour({ kind: "delay", ms: 1500 })
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "slow" }] })
    const call = fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    const deadline = Date.now() + 10_000
    while (fx.provider.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(fx.provider.received).toHaveLength(1)
    expect((await scrape()).samples.get("gateway_settlement_open_holds")).toBe(1)
    const res = await call
    expect(res.status).toBe(200)
    await res.text()
    expect((await scrape()).samples.get("gateway_settlement_open_holds")).toBe(0)
  })

  it("answers 404 not_found to a request that came through a proxy (X-Forwarded-For), with no figures", async () => {
    const res = await fetch(`${fx.gw.url}/metrics`, { headers: { "x-forwarded-for": "203.0.113.9" } })
    expect(res.status).toBe(404)
    const json = await res.json()
    expect(json.error.code).toBe("not_found")
    expect(JSON.stringify(json)).not.toContain("gateway_http")
  })
})

describe("GET /metrics with METRICS_TOKEN_FILE", () => {
  let gw: TestGateway
  const token = "mt_0123456789abcdef0123456789abcdef"
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "pr-metrics-"))
    writeFileSync(join(dir, "token"), `${token}\n`, { mode: 0o600 })
    gw = await startTestGateway({ METRICS_TOKEN_FILE: join(dir, "token") })
  })
  afterAll(() => gw?.close())

  it("serves only the bearer of the token: none or a wrong one gets 404 not_found even from loopback", async () => {
    const none = await fetch(`${gw.url}/metrics`)
    expect(none.status).toBe(404)
    expect((await none.json()).error.code).toBe("not_found")
    const wrong = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })
    expect(wrong.status).toBe(404)
    await wrong.text()
    const right = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": "203.0.113.9" } })
    expect(right.status).toBe(200)
    const { samples } = parseExposition(await right.text())
    expect(samples.get('gateway_http_requests_total{method="GET",route="/metrics",status_class="4xx"}')).toBe(2)
  })
})
