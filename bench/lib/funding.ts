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

export const issueSelfServiceKey = async (gatewayUrl: string, name: string): Promise<IssuedKey> => {
  const res = await fetch(`${gatewayUrl}/api/v1/self-service/key`, {
    method: "POST",
    headers: { "content-type": "application/json" },
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
  readonly keyPrefix: string
  readonly usd: string
}): Promise<{ balanceMicros: number; via: string }> => {
  if (input.databaseUrl === undefined) {
    const tokenFile = join(input.dataDir, "admin-token")
    await waitForFile(tokenFile, 10_000)
    const token = readFileSync(tokenFile, "utf8").trim()
    const res = await fetch(`${input.gatewayUrl}/api/admin/wallets/credit`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ key_prefix: input.keyPrefix, usd: input.usd })
    })
    const json = (await res.json()) as { balance_micros?: number }
    if (res.status !== 200 || typeof json.balance_micros !== "number") throw new Error(`admin wallet credit answered ${res.status}`)
    return { balanceMicros: json.balance_micros, via: "admin API (DATA_DIR/admin-token)" }
  }
  const env = { DATABASE_URL: input.databaseUrl, DATA_DIR: input.dataDir, LOG_LEVEL: "error" }
  const result = await Effect.runPromise(
    ops.creditWallet({ key_prefix: input.keyPrefix, usd: input.usd }).pipe(
      Effect.provide(Layer.fresh(gatewayServicesLayer(env))),
      Effect.scoped
    ) as Effect.Effect<{ balance_micros: number }, unknown, never>
  )
  return { balanceMicros: result.balance_micros, via: "creditWallet operation against the run's Postgres database" }
}
