/** The settings of `npm run bench:paired` (bench/pairedRoutes.ts); docs/benchmark.md is tested against them. */
import { numberIn, oneOf, onOff } from "../../sdks/typescript/src/wire/config/setting.ts"
import { BENCH_IDEMPOTENCY, benchStorageSettings, listOf } from "../lib/benchSettings.ts"

/** The request kinds two of which are measured in alternation. */
export const PAIRED_KINDS = ["chat-stream", "responses-stream", "chat-json", "responses-json"] as const

export const PAIRED_SETTINGS = {
  kinds: listOf(oneOf("BENCH_PAIRED_KINDS", PAIRED_KINDS, "chat-stream"), "chat-stream,responses-stream", { count: 2 }),
  calls: numberIn("BENCH_PAIRED_CALLS", { fallback: 1_500, min: 50, max: 40_000 }),
  block: numberIn("BENCH_PAIRED_BLOCK", { fallback: 50, min: 1, max: 1_000 }),
  /** The gateway under --cpu-prof, the summary printed. */
  profile: onOff("BENCH_PROFILE", false),
  idempotency: BENCH_IDEMPOTENCY,
  ...benchStorageSettings()
}
