/** The settings of `npm run bench:timeline` (bench/timeline.ts); docs/benchmark.md is tested against them. */
import { numberIn, onOff } from "../../sdks/typescript/src/wire/config/setting.ts"
import { BENCH_IDEMPOTENCY, benchStorageSettings } from "../lib/benchSettings.ts"

export const TIMELINE_SETTINGS = {
  calls: numberIn("BENCH_TIMELINE_CALLS", { fallback: 400, min: 20, max: 5_000 }),
  stream: onOff("BENCH_TIMELINE_STREAM", true),
  idempotency: BENCH_IDEMPOTENCY,
  ...benchStorageSettings()
}
