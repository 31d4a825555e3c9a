import { createHash, timingSafeEqual } from "node:crypto"
import { readFileSync } from "node:fs"
import { Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { AdmissionCounters } from "../../services/AdmissionCounters.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { GatewayMetrics } from "../../services/GatewayMetrics.ts"
import { SealerQueue } from "../../services/SealerQueue.ts"
import { notFound } from "../../src/http/ApiError.ts"
import type { Gauge } from "../../src/metrics/RequestMetrics.ts"

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"])

const digest = (s: string) => createHash("sha256").update(s).digest()

/**
 * Who may scrape: with METRICS_TOKEN_FILE set, a caller presenting `Authorization: Bearer <that token>`; without it,
 * only a caller on this host that did not come through a proxy (loopback socket peer and no X-Forwarded-For, which
 * every proxied request carries). Anyone else gets 404, as if the route did not exist.
 */
const metricsAccess = (file: string | undefined) => {
  if (file === undefined) {
    return (request: HttpServerRequest.HttpServerRequest) =>
      request.headers["x-forwarded-for"] === undefined && LOOPBACK.has(Option.getOrElse(request.remoteAddress, () => ""))
  }
  const token = readFileSync(file, "utf8").trim()
  if (token.length < 16) throw new Error("METRICS_TOKEN_FILE must hold a token of at least 16 characters")
  const expected = digest(token)
  return (request: HttpServerRequest.HttpServerRequest) => {
    const header = request.headers["authorization"]
    if (header === undefined || !header.startsWith("Bearer ")) return false
    return timingSafeEqual(digest(header.slice(7).trim()), expected)
  }
}

/** Figures read from the database at scrape time: work accepted but not finished, shared by every node. */
const backlogGauges = (sql: SqlClient.SqlClient, counters: AdmissionCounters["Service"]) =>
  Effect.gen(function*() {
    const [row] = yield* sql<{ deliveries: string; events: string }>`
      SELECT (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying'))::text AS deliveries,
             (SELECT count(*) FROM outbox_events WHERE fanned_out_at IS NULL)::text AS events`
    // Relay holds are taken at admission (Redis, or in process), not in the database.
    const holds = yield* counters.openHolds
    const gauges: Array<Gauge> = [
      { name: "gateway_settlement_open_holds", help: "Relay calls admitted (wallet hold taken) and not yet settled, across all nodes.", value: holds },
      { name: "gateway_webhook_deliveries_backlog", help: "Webhook deliveries waiting for a first attempt or a retry, across all nodes.", value: Number(row!.deliveries) },
      { name: "gateway_webhook_events_unfanned", help: "Outbox events not yet turned into webhook deliveries.", value: Number(row!.events) }
    ]
    return gauges
  })

/** `GET /metrics`: Prometheus text format. Not for the public: see metricsAccess. */
export const MetricsRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const config = yield* AppConfig
  const metrics = yield* GatewayMetrics
  const sql = yield* SqlClient.SqlClient
  const sealer = yield* SealerQueue
  const counters = yield* AdmissionCounters
  const allowed = metricsAccess(config.settings.metricsTokenFile)
  yield* router.add("GET", "/metrics", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!allowed(request)) return yield* notFound()
    const gauges = yield* backlogGauges(sql, counters).pipe(
      Effect.map((g): ReadonlyArray<Gauge> => [...g, { name: "gateway_metrics_database_up", help: "1 when the backlog figures could be read.", value: 1 }]),
      Effect.catchCause(() => Effect.succeed<ReadonlyArray<Gauge>>([{ name: "gateway_metrics_database_up", help: "1 when the backlog figures could be read.", value: 0 }]))
    )
    // This process's sealer queue, read from memory (never fails): a growing figure means batches are written
    // slower than calls finish (the database is slow or the node overloaded).
    const queue = sealer.stats()
    const sealerGauges: ReadonlyArray<Gauge> = [
      { name: "gateway_sealer_pending_jobs", help: "Receipt sealer jobs (settlements, seals, holds) accepted by this process and not yet written.", value: queue.pendingJobs },
      { name: "gateway_sealer_active_tenants", help: "Organisations whose sealing actor in this process has work queued or being written.", value: queue.activeTenants }
    ]
    return HttpServerResponse.text(metrics.render([...gauges, ...sealerGauges]), { contentType: "text/plain; version=0.0.4; charset=utf-8" })
  }))
}))
