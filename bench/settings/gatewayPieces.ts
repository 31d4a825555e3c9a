/** The settings of `npm run bench:gateway-pieces` (bench/gatewayPieces.ts); docs/benchmark.md is tested against them. */
import { numberIn } from "../../sdks/typescript/src/wire/config/setting.ts"
import { benchStorageSettings, checkout } from "../lib/benchSettings.ts"

export const GATEWAY_PIECES_SETTINGS = {
  /** Another checkout (the code before a change): its pieces run alternated with this checkout's. */
  baseRoot: checkout("BENCH_PIECES_BASE_ROOT", "layers/crypto/nodeSha256.ts"),
  calls: numberIn("BENCH_PIECES_CALLS", { fallback: 2_000, min: 1, max: 1_000_000 }),
  rounds: numberIn("BENCH_PIECES_ROUNDS", { fallback: 7, min: 1, max: 50 }),
  /** The look-up runs on this PostgreSQL when set (its CPU is read too), else on in-memory PGlite; no Redis is used. */
  databaseUrl: benchStorageSettings().databaseUrl
}
