/** The settings of `npm run bench:settle` (bench/settle.ts); docs/benchmark.md is tested against them. */
import { custom, numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"
import { benchStorageSettings, listOf } from "../lib/benchSettings.ts"

/** `16x8`: 16 calls in flight spread over 8 tenants. */
const scenario = custom("BENCH_SETTLE_SCENARIOS", "<concurrency>x<tenants>, such as 16x8", "unset", (raw, fail) => {
  const m = /^([1-9][0-9]{0,3})x([1-9][0-9]{0,3})$/.exec(raw?.trim() ?? "")
  return m === null ? fail(raw) : { concurrency: Number(m[1]), tenants: Number(m[2]) }
})

export const SETTLE_SETTINGS = {
  calls: numberIn("BENCH_SETTLE_CALLS", { fallback: 2_000, min: 1 }),
  scenarios: listOf(scenario, "1x1,16x1,16x8"),
  /** The gateway runs as in the tests (test/support/databases.ts), on PostgreSQL/Redis when these are set. */
  ...benchStorageSettings()
}
