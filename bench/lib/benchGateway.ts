/**
 * The start-up every gateway bench shares (`npm run bench`, `bench:paired`, `bench:timeline`): the fake provider and
 * the gateway as their own Node processes, the gateway on the run's storage (a fresh PostgreSQL database and Redis
 * prefix, or embedded), waited on until healthy, and a funded self-service key. One copy, so a change to how the
 * gateway is started for measuring (its flags, limits, environment) reaches every bench at once.
 */
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { GATEWAY_NODE_FLAGS } from "../../programs/gatewayNodeFlags.ts"
import { creditWallet, type IssuedKey, issueSelfServiceKey } from "./funding.ts"
import { freePort, type ServerProcess, startNodeProcess, waitForHealthy, waitForUrlLine } from "./processes.ts"
import type { BenchStorage } from "./storage.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** Limits high enough never to throttle a bench: it measures the cost of the checks, not their verdicts. */
export const BENCH_RATE_LIMITS_JSON = JSON.stringify({
  free: { keyPerMinute: null, tenantPer60s: 100_000_000, tenantPer3600s: 1_000_000_000, monthlyTokens: 1_000_000_000_000 }
})

/** The gateway trusts the load generator's X-Forwarded-For, so each tenant's key is issued from its own network. */
export const LOOPBACK_TRUSTED_PROXIES = "127.0.0.1,::ffff:127.0.0.1,::1"

/**
 * Environment for a child: the caller's (so PATH etc. hold), minus what could point a server elsewhere or change
 * what it does: storage and listen settings, the benches' own settings (BENCH_*, FRONT_*), the fake provider's,
 * OpenTelemetry's (a bench that traces sets its exporter explicitly) and NODE_OPTIONS (a child's Node flags are
 * given explicitly).
 */
export const benchChildEnv = (extra: Record<string, string>): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const k of ["DATABASE_URL", "REDIS_URL", "REDIS_PREFIX", "DATA_DIR", "PORT", "HOST", "LOCAL_PROVIDER_URL", "NODE_OPTIONS"]) delete env[k]
  for (const k of Object.keys(env)) if (["BENCH_", "FRONT_", "FAKE_PROVIDER_", "OTEL_"].some((p) => k.startsWith(p))) delete env[k]
  return { ...env, ...extra }
}

/** programs/fake-provider.ts on a free loopback port; resolves once it printed its URL. */
export const startBenchFakeProvider = async (): Promise<{ readonly process: ServerProcess; readonly url: string }> => {
  const proc = startNodeProcess("fake-provider", join(root, "programs", "fake-provider.ts"), benchChildEnv({
    FAKE_PROVIDER_HOST: "127.0.0.1",
    FAKE_PROVIDER_PORT: "0"
  }))
  return { process: proc, url: await waitForUrlLine(proc, 15_000) }
}

export interface BenchGatewayOptions {
  readonly storage: BenchStorage
  readonly providerUrl: string
  /** TRACE_SAMPLE_RATIO and the like, on top of the bench defaults */
  readonly env?: Record<string, string>
  /** extra Node flags after GATEWAY_NODE_FLAGS (e.g. --cpu-prof) */
  readonly nodeFlags?: ReadonlyArray<string>
  /** the checkout whose programs/gateway.ts runs (another one to measure a change's before beside its after) */
  readonly checkout?: string
  /** the process's name in diagnostics ("gateway") */
  readonly name?: string
}

/**
 * programs/gateway.ts on a free loopback port with the bench's settings (warn logging, no tracing, loopback trusted
 * as a proxy, limits that never throttle), `env` on top; resolves once /healthz answers.
 */
export const startBenchGateway = async (options: BenchGatewayOptions): Promise<{ readonly process: ServerProcess; readonly url: string }> => {
  const port = await freePort()
  const proc = startNodeProcess(options.name ?? "gateway", join(options.checkout ?? root, "programs", "gateway.ts"), benchChildEnv({
    ...options.storage.env,
    HOST: "127.0.0.1",
    PORT: String(port),
    LOCAL_PROVIDER_URL: options.providerUrl,
    LOG_LEVEL: "warn",
    TRACE_SAMPLE_RATIO: "0",
    TRUSTED_PROXIES: LOOPBACK_TRUSTED_PROXIES,
    RATE_LIMITS_JSON: BENCH_RATE_LIMITS_JSON,
    ...options.env
  }), [...GATEWAY_NODE_FLAGS, ...(options.nodeFlags ?? [])])
  const url = `http://127.0.0.1:${port}`
  await waitForHealthy(proc, `${url}/healthz`, 90_000)
  return { process: proc, url }
}

/** A self-service key issued from `network` and credited with `usd` the way the run's storage allows. */
export const fundedBenchKey = async (
  gatewayUrl: string,
  storage: BenchStorage,
  name: string,
  network: string,
  usd: string
): Promise<IssuedKey> => {
  const key = await issueSelfServiceKey(gatewayUrl, name, network)
  await creditWallet({ gatewayUrl, dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, keyPrefix: key.keyPrefix, usd })
  return key
}
