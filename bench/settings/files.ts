/** The settings of `npm run bench:files` (bench/files.ts), given on its command line; docs/benchmark.md is tested against them. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"

export const FILES_BENCH_SETTINGS = {
  /** Runs per case in its own process, the first cold: at least one warm run for the median. */
  runs: numberIn("--runs", { fallback: 4, min: 2 })
}
