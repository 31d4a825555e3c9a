/** The settings of `npm run bench:mcp` (bench/mcp.ts); docs/benchmark.md is tested against them. */
import { numberIn, oneOf } from "../../sdks/typescript/src/wire/config/setting.ts"
import { listOf } from "../lib/benchSettings.ts"

/** The parts of the MCP benchmark, in the order they run. */
export const MCP_BENCH_PARTS = ["stdio", "http", "startup", "ocr"] as const

const count = (name: string, fallback: number) => numberIn(name, { fallback, min: 1 })

export const MCP_BENCH_SETTINGS = {
  stdioCalls: count("BENCH_MCP_CALLS", 1_000),
  sessions: count("BENCH_MCP_SESSIONS", 50),
  httpCalls: count("BENCH_MCP_HTTP_CALLS", 10_000),
  rounds: count("BENCH_MCP_ROUNDS", 6),
  starts: count("BENCH_MCP_STARTS", 5),
  ocrCalls: count("BENCH_MCP_OCR_CALLS", 20),
  only: listOf(oneOf("BENCH_MCP_ONLY", MCP_BENCH_PARTS, "stdio"), MCP_BENCH_PARTS.join(","))
}
