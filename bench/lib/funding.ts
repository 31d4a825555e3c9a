/**
 * A gateway key with money on it, obtained the way an operator would: a self-service key, then an operator
 * credit. With embedded storage the credit goes through the admin API with the bootstrap token the gateway wrote
 * to DATA_DIR/admin-token (PGlite is single-process, so only the gateway may open it). With Postgres there is no
 * bootstrap token; the bench runs the same admin operation (`creditWallet` from layers/AdminOperations.ts)
 * against the run's database itself, as `programs/cli.ts` does.
 */
import { Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as ops from "../../layers/AdminOperations.ts"
import { gatewayServicesLayer } from "../../layers/GatewayLive.ts"

export interface IssuedKey {
  readonly apiKey: string
  readonly keyPrefix: string
}

/**
 * `network` (an IPv4 address sent as X-Forwarded-For; the bench's gateway trusts 127.0.0.1 as a proxy) puts the
 * issuance on its own pretend network, so the per-network issuance limit (5 an hour) never stops a many-tenant run.
 */
export const issueSelfServiceKey = async (gatewayUrl: string, name: string, network?: string): Promise<IssuedKey> => {
  const res = await fetch(`${gatewayUrl}/api/v1/self-service/key`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(network === undefined ? {} : { "x-forwarded-for": network }) },
    body: JSON.stringify({ name })
  })
  const json = (await res.json()) as { api_key?: string; key_prefix?: string }
  if (res.status !== 201 || json.api_key === undefined || json.key_prefix === undefined) {
    throw new Error(`self-service key issuance answered ${res.status}`)
  }
  return { apiKey: json.api_key, keyPrefix: json.key_prefix }
}

const waitForFile = async (path: string, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

export const creditWallet = async (input: {
  readonly gatewayUrl: string
  readonly dataDir: string
  /** set when the gateway runs on Postgres */
  readonly databaseUrl: string | undefined
  /** one key's prefix, or several (each organisation gets `usd`) */
  readonly keyPrefix: string | ReadonlyArray<string>
  readonly usd: string
}): Promise<{ balanceMicros: number; via: string }> => {
  const prefixes = typeof input.keyPrefix === "string" ? [input.keyPrefix] : input.keyPrefix
  let balanceMicros = 0
  if (input.databaseUrl === undefined) {
    const tokenFile = join(input.dataDir, "admin-token")
    await waitForFile(tokenFile, 10_000)
    const token = readFileSync(tokenFile, "utf8").trim()
    for (const keyPrefix of prefixes) {
      const res = await fetch(`${input.gatewayUrl}/api/admin/wallets/credit`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ key_prefix: keyPrefix, usd: input.usd })
      })
      const json = (await res.json()) as { balance_micros?: number }
      if (res.status !== 200 || typeof json.balance_micros !== "number") throw new Error(`admin wallet credit answered ${res.status}`)
      balanceMicros = json.balance_micros
    }
    return { balanceMicros, via: "admin API (DATA_DIR/admin-token)" }
  }
  const env = { DATABASE_URL: input.databaseUrl, DATA_DIR: input.dataDir, LOG_LEVEL: "error" }
  // One storage layer for every credit: opening it per organisation would cost a pool and migrations check each.
  const result = await Effect.runPromise(
    Effect.forEach(prefixes, (keyPrefix) => ops.creditWallet({ key_prefix: keyPrefix, usd: input.usd })).pipe(
      Effect.provide(Layer.fresh(gatewayServicesLayer(env))),
      Effect.scoped
    ) as Effect.Effect<ReadonlyArray<{ balance_micros: number }>, unknown, never>
  )
  return { balanceMicros: result.at(-1)?.balance_micros ?? 0, via: "creditWallet operation against the run's Postgres database" }
}
