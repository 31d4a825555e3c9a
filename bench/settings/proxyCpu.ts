/** The settings of `npm run bench:proxy-cpu` (bench/proxyCpu.ts); docs/benchmark.md is tested against them. */
import { numberIn, oneOf, onOff, text } from "../../sdks/typescript/src/wire/config/setting.ts"
import { checkout, listOf } from "../lib/benchSettings.ts"

export const PROXY_CPU_SETTINGS = {
  /** Checkouts whose proxies are measured side by side; none given: this checkout alone. */
  roots: { ...listOf(checkout("BENCH_PROXY_ROOTS", "programs/proxy.ts"), ""), fallback: "this checkout" },
  seconds: numberIn("BENCH_SECONDS", { fallback: 3, min: 0.2, max: 120, integer: false, unit: "seconds" }),
  rounds: numberIn("BENCH_ROUNDS", { fallback: 5, min: 1, max: 100 }),
  concurrency: numberIn("BENCH_CONCURRENCY", { fallback: 16, min: 1, max: 512 }),
  names: oneOf("BENCH_NAMES", ["off", "builtin"], "builtin"),
  stream: onOff("BENCH_STREAM", false),
  /** Extra node flags for the proxies, space-separated (e.g. --perf-basic-prof). */
  nodeFlags: text("BENCH_NODE_FLAGS", "none"),
  gatewayDelayMs: numberIn("BENCH_GATEWAY_DELAY_MS", { fallback: 0, min: 0, max: 60_000, unit: "milliseconds" }),
  bare: onOff("BENCH_BARE", false)
}
