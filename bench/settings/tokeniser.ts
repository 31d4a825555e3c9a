/** The settings of `npm run bench:engine` (bench/tokeniser.ts); docs/benchmark.md is tested against them. */
import { custom, numberIn, oneOf } from "../../sdks/typescript/src/wire/config/setting.ts"
import { listOf } from "../lib/benchSettings.ts"
import { MB } from "../lib/tokeniserReport.ts"

/** The shapes of text the tokeniser bench measures; the last three once overflowed the regex stack. */
export const TOKENISER_KINDS = ["prose", "repeated", "digit-run", "dotted-run", "spaced-digits", "dashed-digits"] as const

/** `10KB` or `1MB`, in bytes. */
const size = custom("BENCH_SIZES", "a size such as 10KB or 1MB", "unset", (raw, fail) => {
  const m = /^(\d+)(KB|MB)$/i.exec(raw?.trim() ?? "")
  return m === null || Number(m[1]) === 0 ? fail(raw) : Number(m[1]) * (m[2]!.toUpperCase() === "KB" ? 1024 : MB)
})

export const TOKENISER_BENCH_SETTINGS = {
  sizes: listOf(size, "10KB,100KB,1MB,10MB"),
  runs: numberIn("BENCH_RUNS", { fallback: 3, min: 1 }),
  kinds: listOf(oneOf("BENCH_KINDS", TOKENISER_KINDS, "prose"), TOKENISER_KINDS.join(","))
}
