/**
 * Every benchmark program with its settings schema, by script path: what docs/benchmark.md's "Settings" section
 * documents, one table per program (test/docs/benchmarkSettings.test.ts holds the two to each other). A program that
 * reads a setting must have it in its schema here; test/bench/settings/programs.test.ts finds none read raw.
 */
import type { Schema } from "../../sdks/typescript/src/wire/config/setting.ts"
import { BARE_PROXY_SETTINGS } from "./bareProxy.ts"
import { EGRESS_BENCH_SETTINGS } from "./egressPolicy.ts"
import { FILES_BENCH_SETTINGS } from "./files.ts"
import { FRONT_SETTINGS } from "./frontStages.ts"
import { GATEWAY_PIECES_SETTINGS } from "./gatewayPieces.ts"
import { MCP_BENCH_SETTINGS } from "./mcp.ts"
import { PAIRED_SETTINGS } from "./pairedRoutes.ts"
import { PROXY_BENCH_SETTINGS } from "./proxy.ts"
import { PROXY_CPU_SETTINGS } from "./proxyCpu.ts"
import { REDACT_BENCH_SETTINGS } from "./redactImage.ts"
import { ROUND_TRIPS_SETTINGS } from "./roundTrips.ts"
import { RUN_SETTINGS } from "./run.ts"
import { SDK_BENCH_SETTINGS } from "./sdk.ts"
import { SETTLE_SETTINGS } from "./settle.ts"
import { SETTLE_STATEMENT_SETTINGS } from "./settleStatement.ts"
import { STARTER_BENCH_SETTINGS } from "./starter.ts"
import { STUB_GATEWAY_SETTINGS } from "./stubGateway.ts"
import { TIMELINE_SETTINGS } from "./timeline.ts"
import { TOKENISER_BENCH_SETTINGS } from "./tokeniser.ts"

export const BENCH_PROGRAM_SETTINGS: Readonly<Record<string, Schema>> = {
  "bench/run.ts": RUN_SETTINGS,
  "bench/timeline.ts": TIMELINE_SETTINGS,
  "bench/pairedRoutes.ts": PAIRED_SETTINGS,
  "bench/frontStages.ts": FRONT_SETTINGS,
  "bench/gatewayPieces.ts": GATEWAY_PIECES_SETTINGS,
  "bench/settle.ts": SETTLE_SETTINGS,
  "bench/settleStatement.ts": SETTLE_STATEMENT_SETTINGS,
  "bench/roundTrips.ts": ROUND_TRIPS_SETTINGS,
  "bench/proxy.ts": PROXY_BENCH_SETTINGS,
  "bench/proxyCpu.ts": PROXY_CPU_SETTINGS,
  "bench/tokeniser.ts": TOKENISER_BENCH_SETTINGS,
  "bench/sdk.ts": SDK_BENCH_SETTINGS,
  "bench/mcp.ts": MCP_BENCH_SETTINGS,
  "bench/egressPolicy.ts": EGRESS_BENCH_SETTINGS,
  "bench/starter.ts": STARTER_BENCH_SETTINGS,
  "bench/files.ts": FILES_BENCH_SETTINGS,
  "bench/redactImage.ts": REDACT_BENCH_SETTINGS,
  "bench/lib/stubGateway.ts": STUB_GATEWAY_SETTINGS,
  "bench/bare-proxy.ts": BARE_PROXY_SETTINGS
}
