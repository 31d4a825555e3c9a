/**
 * The settings of `npm run bench` and `npm run bench:peers` (bench/run.ts), read whole at its start
 * (bench/lib/benchSettings.ts); documented in docs/benchmark.md, which test/docs/benchmarkSettings.test.ts holds to
 * this schema. BENCH_QUICK=1 shortens the defaults of the timing settings; a value given explicitly still wins.
 */
import { custom, nonEmpty, numberIn, oneOf, onOff, text } from "../../sdks/typescript/src/wire/config/setting.ts"
import { BENCH_IDEMPOTENCY, BENCH_QUICK, benchStorageSettings, listOf, quickDefault } from "../lib/benchSettings.ts"
import { PORTKEY_VERSION } from "../lib/portkeyTarget.ts"

const seconds = (name: string, range: { readonly min: number; readonly max: number }, fallback: number, quickFallback: number) =>
  quickDefault(
    numberIn(name, { ...range, fallback, integer: false, unit: "seconds" }),
    numberIn(name, { ...range, fallback: quickFallback, integer: false, unit: "seconds" })
  )

const PROFILE_SWITCH = onOff("BENCH_PROFILE", false)

export const RUN_SETTINGS = {
  quick: BENCH_QUICK,
  seconds: seconds("BENCH_SECONDS", { min: 0.2, max: 120 }, 3, 1),
  warmupSeconds: seconds("BENCH_WARMUP_SECONDS", { min: 0, max: 10 }, 0.5, 0.3),
  rounds: quickDefault(numberIn("BENCH_ROUNDS", { fallback: 3, min: 1, max: 20 }), numberIn("BENCH_ROUNDS", { fallback: 1, min: 1, max: 20 })),
  stageSeconds: seconds("BENCH_STAGE_SECONDS", { min: 0, max: 60 }, 1.5, 0),
  concurrency: listOf(numberIn("BENCH_CONCURRENCY", { fallback: 1, min: 1, max: 512 }), "1,16,64"),
  proxy: onOff("BENCH_PROXY", true),
  peers: listOf(oneOf("BENCH_PEERS", ["portkey"], "portkey"), ""),
  portkeyVersion: text("BENCH_PORTKEY_VERSION", PORTKEY_VERSION),
  /** Which processes run under --cpu-prof: the gateway (1, or on), the two proxies (proxy), or none. */
  profile: custom("BENCH_PROFILE", "1 (the gateway), proxy (the two proxies) or 0 (none)", "0", (raw, fail) => {
    const value = nonEmpty(raw)?.toLowerCase()
    if (value === "proxy") return "proxy" as const
    try {
      return PROFILE_SWITCH.read({ BENCH_PROFILE: value }) ? "gateway" as const : undefined
    } catch {
      return fail(raw)
    }
  }),
  idempotency: BENCH_IDEMPOTENCY,
  ...benchStorageSettings()
}
