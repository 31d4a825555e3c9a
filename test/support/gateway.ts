import { Effect, type Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { gatewayLayer } from "../../layers/GatewayLive.ts"
import { createTestStorage, type TestStorage } from "./databases.ts"

/**
 * A real gateway, in this process, listening on an ephemeral 127.0.0.1 port, with fresh storage
 * (see databases.ts). `query` runs SQL against its database to assert side effects.
 */
export interface TestGateway {
  readonly url: string
  readonly env: Record<string, string>
  readonly storage: TestStorage
  readonly query: <A = Record<string, unknown>>(statement: string, ...params: Array<unknown>) => Promise<ReadonlyArray<A>>
  readonly runtime: ManagedRuntime.ManagedRuntime<any, any>
  readonly close: () => Promise<void>
}

export const startTestGateway = async (extraEnv: Record<string, string> = {}): Promise<TestGateway> => {
  const storage = await createTestStorage()
  // Loopback is the trusted proxy by default so tests can play many client networks with X-Forwarded-For.
  const env = {
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "error",
    TRACE_SAMPLE_RATIO: "0",
    TRUSTED_PROXIES: "127.0.0.1,::ffff:127.0.0.1,::1",
    ...storage.env,
    ...extraEnv
  }
  const runtime = ManagedRuntime.make(gatewayLayer(env) as Layer.Layer<any, any, never>)
  const address = await runtime.runPromise(Effect.map(Effect.service(HttpServer.HttpServer), (s) => s.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    env,
    storage,
    runtime,
    query: (statement, ...params) =>
      runtime.runPromise(
        Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(statement, params)) as Effect.Effect<any, any, any>
      ),
    close: async () => {
      await runtime.dispose()
      await storage.drop()
    }
  }
}
