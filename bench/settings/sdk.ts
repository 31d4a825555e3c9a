/** The settings of `npm run bench:sdk` (bench/sdk.ts); docs/benchmark.md is tested against them. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"

export const SDK_BENCH_SETTINGS = {
  runs: numberIn("BENCH_RUNS", { fallback: 200, min: 10 })
}
