/** The settings of `npm run bench:redact` (bench/redactImage.ts), given on its command line; docs/benchmark.md is tested against them. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"

export const REDACT_BENCH_SETTINGS = {
  /** Warm runs after the cold one. */
  runs: numberIn("--runs", { fallback: 5, min: 1 })
}
