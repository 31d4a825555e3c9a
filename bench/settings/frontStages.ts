/** The settings of `node bench/frontStages.ts`; docs/benchmark.md is tested against them. */
import { custom, nonEmpty, numberIn, oneOf, text } from "../../sdks/typescript/src/wire/config/setting.ts"
import { BENCH_IDEMPOTENCY, benchStorageSettings, checkout, listOf } from "../lib/benchSettings.ts"

/** The kinds of call, each stopping one step further into the gateway's pipeline. */
export const FRONT_KINDS = ["healthz", "401", "403", "200-json", "200-stream", "200-json-noidem"] as const
type FrontKind = (typeof FRONT_KINDS)[number]

const kind = (name: string) => oneOf(name, FRONT_KINDS, "healthz")

export const FRONT_SETTINGS = {
  kinds: listOf(kind("FRONT_KINDS"), "healthz,401,403,200-json"),
  calls: numberIn("FRONT_CALLS", { fallback: 2_000, min: 1 }),
  /** Requests in flight at once within a block (one keep-alive connection each). */
  concurrency: numberIn("FRONT_CONCURRENCY", { fallback: 1, min: 1, max: 512 }),
  block: numberIn("FRONT_BLOCK", { fallback: 100, min: 1 }),
  baseRoot: checkout("FRONT_BASE_ROOT", "programs/gateway.ts"),
  /** Afterwards, send one kind for that many seconds (e.g. while `perf record` runs). */
  hold: custom("FRONT_HOLD", `<kind>:<seconds>, such as 200-json:60 (kinds: ${FRONT_KINDS.join(", ")})`, "unset", (raw, fail) => {
    const value = nonEmpty(raw)
    if (value === undefined) return undefined
    const m = /^([a-z0-9-]+):([0-9]+(?:\.[0-9]+)?)$/.exec(value)
    if (m === null || !(FRONT_KINDS as ReadonlyArray<string>).includes(m[1]!) || Number(m[2]) <= 0) return fail(raw)
    return { kind: m[1] as FrontKind, seconds: Number(m[2]) }
  }),
  /** Seconds to keep the servers up idle at the end (0: none). */
  pause: numberIn("FRONT_PAUSE", { fallback: 0, min: 0, integer: false, unit: "seconds" }),
  /** The gateways' NODE_OPTIONS (e.g. --perf-basic-prof). */
  nodeOptions: text("FRONT_NODE_OPTIONS", "none"),
  /** Node flags on the gateways' command line, space-separated: the V8 flags NODE_OPTIONS refuses (--trace-gc). */
  nodeFlags: text("FRONT_NODE_FLAGS", "none"),
  /** The same, for this checkout's gateway only (e.g. a heap setting tried against the base). */
  newNodeFlags: text("FRONT_NEW_NODE_FLAGS", "none"),
  /** A path: each gateway's output is copied to `<path>.<label>`. */
  gatewayLog: text("FRONT_GATEWAY_LOG", "none"),
  idempotency: BENCH_IDEMPOTENCY,
  ...benchStorageSettings()
}
