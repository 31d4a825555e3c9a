/**
 * `node bench/roundTrips.ts`: the round trips one idempotent, non-streamed relay call makes, counted instead of timed
 * (so the answer does not depend on how busy the machine is): Redis commands sent by the gateway (MONITOR, filtered by
 * the run's key prefix; commands a Lua script runs inside Redis are counted apart) and PostgreSQL transactions
 * (pg_stat_database of the run's own database, background work included), per call over 100 sequential calls.
 * Needs DATABASE_URL and REDIS_URL (a fresh database and key prefix, dropped afterwards). Prints one JSON line.
 */
import { Redis } from "ioredis"
import { startFakeProvider } from "../programs/fake-provider.ts"
import { attestedHeaders } from "../test/support/engine.ts"
import { startTestGateway } from "../test/support/gateway.ts"
import { fundedKey } from "../test/support/tenant.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { ROUND_TRIPS_SETTINGS } from "./settings/roundTrips.ts"

const { redisUrl } = readBenchSettings("bench/roundTrips.ts", ROUND_TRIPS_SETTINGS)
const provider = await startFakeProvider({ port: 0 })
const gw = await startTestGateway({
  LOCAL_PROVIDER_URL: provider.url,
  RATE_LIMITS_JSON: JSON.stringify({ free: { keyPerMinute: null, tenantPer60s: 1e8, tenantPer3600s: 1e9, monthlyTokens: 1e12 } })
})
const { apiKey } = await fundedKey(gw, "1000")
const N = 100
const bodies = await Promise.all(Array.from({ length: N + 20 }, async (_, i) => {
  const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: `hello ${i}` }] })
  return { body, headers: await attestedHeaders("chat.completions", body) }
}))
const call = async (i: number) => {
  const { body, headers } = bodies[i]
  const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": crypto.randomUUID(), ...headers },
    body
  })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`status ${res.status}`)
}
for (let i = 0; i < 20; i++) await call(N + i)
const prefix = gw.env.REDIS_PREFIX
const monitor = new Redis(redisUrl!)
const m = await monitor.monitor()
const commands: Array<string> = []
let inner = 0
m.on("monitor", (_time: string, args: Array<string>, source: string) => {
  if (!args.some((a) => typeof a === "string" && a.startsWith(prefix))) return
  // Commands a script runs are reported too (source "lua"): those are not round trips.
  if (source === "lua") inner++
  else commands.push(args[0].toLowerCase())
})
const xacts = async () => Number((await gw.query<{ x: string }>("SELECT xact_commit::text AS x FROM pg_stat_database WHERE datname = current_database()"))[0].x)
await new Promise((r) => setTimeout(r, 1200))
const x0 = await xacts()
for (let i = 0; i < N; i++) await call(i)
await new Promise((r) => setTimeout(r, 1500))
const x1 = await xacts()
m.disconnect()
monitor.disconnect()
const byName: Record<string, number> = {}
for (const c of commands) byName[c] = (byName[c] ?? 0) + 1
console.log(JSON.stringify({
  redisRoundTripsPerCall: commands.length / N,
  redisCommandsInsideScriptsPerCall: inner / N,
  redisByName: Object.fromEntries(Object.entries(byName).map(([k, v]) => [k, v / N])),
  pgTransactionsPerCall: (x1 - x0 - 2) / N
}))
await gw.close()
await provider.close()
process.exit(0)
