/** The settings of `npm run bench:starter` (bench/starter.ts); docs/benchmark.md is tested against them. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"
import { benchStorageSettings } from "../lib/benchSettings.ts"

export const STARTER_BENCH_SETTINGS = {
  runs: numberIn("BENCH_RUNS", { fallback: 10, min: 3 }),
  /** The gateway runs as in the tests (test/support/databases.ts), on PostgreSQL/Redis when these are set. */
  ...benchStorageSettings()
}
