import { Duration, Effect, Option } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { RedisClient } from "../redis/RedisClient.ts"

/** How long one readiness probe may take before it counts as failed (a hung dependency is not ready). */
const PROBE_TIMEOUT = Duration.seconds(2)

export type ReadinessCheck =
  | { readonly status: "ok"; readonly latency_ms: number }
  | { readonly status: "fail"; readonly detail: string }
  | { readonly status: "not_configured"; readonly detail: string }

/** Runs one probe with a timeout; its failure is reported by kind only (driver messages can quote connection strings). */
const probe = (name: string, effect: Effect.Effect<unknown, unknown>): Effect.Effect<ReadinessCheck> =>
  Effect.gen(function*() {
    const started = performance.now()
    const outcome = yield* effect.pipe(
      Effect.timeoutOption(PROBE_TIMEOUT),
      Effect.map((o) => (Option.isSome(o) ? "ok" as const : "timeout" as const)),
      Effect.catchCause(() => Effect.succeed("error" as const))
    )
    if (outcome === "ok") return { status: "ok", latency_ms: Math.round((performance.now() - started) * 10) / 10 }
    return {
      status: "fail",
      detail: outcome === "timeout"
        ? `${name} did not answer within ${Duration.toMillis(PROBE_TIMEOUT)} ms`
        : `${name} is unreachable or refused the probe`
    }
  })

/**
 * `GET /readyz`: readiness for a load balancer or orchestrator. The database answers `SELECT 1` and Redis (when
 * REDIS_URL is set) answers PING, each within 2 s: 200 `{ status: "ready", checks }`, else 503
 * `{ status: "not_ready", checks }` naming the failed check. `/healthz` stays liveness only (the process serves HTTP).
 */
export const ReadinessRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const redis = yield* Effect.serviceOption(RedisClient)
  const database = config.databaseUrl === undefined ? "embedded PGlite" : "PostgreSQL"
  yield* router.add("GET", "/readyz", Effect.gen(function*() {
    const checks = yield* Effect.all({
      database: probe(database, sql`SELECT 1`),
      redis: Option.isSome(redis)
        ? probe("Redis", Effect.tryPromise(() => redis.value.redis.ping()))
        : Effect.succeed<ReadinessCheck>({ status: "not_configured", detail: "REDIS_URL unset: shared state is in-process (one node only)" })
    }, { concurrency: "unbounded" })
    const ready = Object.values(checks).every((c) => c.status !== "fail")
    return HttpServerResponse.jsonUnsafe({ status: ready ? "ready" : "not_ready", checks }, { status: ready ? 200 : 503 })
  }))
}))
