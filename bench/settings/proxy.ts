/** The settings of `npm run bench:proxy` (bench/proxy.ts); docs/benchmark.md is tested against them. */
import { numberIn, onOff } from "../../sdks/typescript/src/wire/config/setting.ts"

export const PROXY_BENCH_SETTINGS = {
  seconds: numberIn("BENCH_SECONDS", { fallback: 4, min: 0.2, max: 120, integer: false, unit: "seconds" }),
  /** Each proxy under --cpu-prof, the summary in the report. */
  profile: onOff("BENCH_PROFILE", false)
}
