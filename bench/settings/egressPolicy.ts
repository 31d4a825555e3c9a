/** The settings of `npm run bench:egress` (bench/egressPolicy.ts); docs/benchmark.md is tested against them. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"

export const EGRESS_BENCH_SETTINGS = {
  rounds: numberIn("BENCH_ROUNDS", { fallback: 7, min: 1 }),
  calls: numberIn("BENCH_CALLS", { fallback: 20_000, min: 1 })
}
