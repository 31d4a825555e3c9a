import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gatewayLayer, gatewayServicesLayer } from "../../layers/GatewayLive.ts"
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

const testEnv = (storage: TestStorage, extraEnv: Record<string, string>): Record<string, string> => ({
  HOST: "127.0.0.1",
  PORT: "0",
  LOG_LEVEL: "error",
  TRACE_SAMPLE_RATIO: "0",
  // Loopback is the trusted proxy so tests can play many client networks with X-Forwarded-For.
  TRUSTED_PROXIES: "127.0.0.1,::ffff:127.0.0.1,::1",
  PAYMENTS_PROVIDER: "dev",
  ...storage.env,
  ...extraEnv
})

/** Builds one gateway runtime and waits until it listens; `close` disposes the runtime only. */
const openGateway = async (
  env: Record<string, string>,
  storage: TestStorage,
  shared?: { readonly memoMap: Layer.MemoMap; readonly services: ReturnType<typeof gatewayServicesLayer> }
): Promise<TestGateway> => {
  const layer = shared ? gatewayLayer(env, shared.services) : gatewayLayer(env)
  const runtime = ManagedRuntime.make(layer as Layer.Layer<any, any, never>, shared ? { memoMap: shared.memoMap } : undefined)
  const address = await runtime.runPromise(Effect.map(Effect.service(HttpServer.HttpServer), (s) => s.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    env,
    storage,
    runtime,
    query: (statement, ...params) =>
      runtime.runPromise(
        Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(statement, params)) as Effect.Effect<any, any, any>
      ),
    close: () => runtime.dispose()
  }
}

export const startTestGateway = async (extraEnv: Record<string, string> = {}): Promise<TestGateway> => {
  const storage = await createTestStorage()
  const gateway = await openGateway(testEnv(storage, extraEnv), storage)
  return {
    ...gateway,
    close: async () => {
      await gateway.close()
      await storage.drop()
    }
  }
}

/**
 * Two gateways, each with its own HTTP server, that share storage the way two nodes of a deployment do: with
 * DATABASE_URL/REDIS_URL set, two fully separate runtimes on the same database and Redis prefix; embedded (PGlite
 * is single-process), two runtimes over ONE services layer (same database, same in-process shared state).
 */
export const startTestGatewayPair = async (extraEnv: Record<string, string> = {}): Promise<[TestGateway, TestGateway]> => {
  const storage = await createTestStorage()
  const env = testEnv(storage, extraEnv)
  if (storage.mode.sql === "postgres") {
    // Two nodes of one deployment share the key-encryption key, or neither could read the other's signing key.
    const file = join(mkdtempSync(join(tmpdir(), "pr-kek-")), "kek")
    writeFileSync(file, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"), { mode: 0o600 })
    env.KEK_FILE = file
  }
  const shared = storage.mode.sql === "postgres" ? undefined : { memoMap: Layer.makeMemoMapUnsafe(), services: gatewayServicesLayer(env) }
  const a = await openGateway(env, storage, shared)
  const b = await openGateway(env, storage, shared)
  let closed = 0
  const closeOne = (gateway: TestGateway) => async () => {
    await gateway.close()
    if (++closed === 2) await storage.drop()
  }
  return [{ ...a, close: closeOne(a) }, { ...b, close: closeOne(b) }]
}
