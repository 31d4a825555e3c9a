import { Context, Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { AppConfig } from "../../services/AppConfig.ts"

/** One ioredis connection per process, closed with the layer's scope. Keys are namespaced by REDIS_PREFIX. */
export class RedisClient extends Context.Service<RedisClient, { readonly redis: Redis; readonly prefix: string }>()(
  "privacy-relay/RedisClient"
) {
  static readonly layer = Layer.effect(
    RedisClient,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const url = config.redisUrl
      if (url === undefined) return yield* Effect.die(new Error("RedisClient needs REDIS_URL"))
      const context = yield* Effect.context<never>()
      // ioredis prints "[ioredis] Unhandled error event" to stderr for a lost connection unless someone listens:
      // report it as our JSON log line instead (it reconnects by itself; /readyz shows the outage).
      const onError = (error: Error & { code?: string }) =>
        Effect.runForkWith(context)(
          Effect.logWarning("Redis connection error; reconnecting").pipe(Effect.annotateLogs({ error: error.code ?? error.message }))
        )
      const redis = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            // No auto-pipelining: it holds every command until the event loop's check phase (setImmediate) and builds a
            // Pipeline object per flush, ~40 us of CPU and ~90 us of wait per command for a lone call (bench
            // micro-benchmark: admission script 112-125 us CPU with it, 72-83 us without). The finish script, the one
            // command sent while other calls may be ending, corks the socket for the turn instead (AdmissionCounters.ts).
            const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableAutoPipelining: false })
            client.on("error", onError)
            // A gateway that cannot reach Redis at start-up does not start; its client must not go on retrying.
            await client.connect().catch((error) => {
              client.disconnect()
              throw error
            })
            return client
          },
          catch: (cause) => new Error(`cannot connect to Redis at REDIS_URL: ${String(cause)}`)
        }),
        (client) => Effect.promise(() => client.quit()).pipe(Effect.ignore)
      )
      return RedisClient.of({ redis, prefix: config.redisPrefix })
    }).pipe(Effect.orDie)
  )
}
