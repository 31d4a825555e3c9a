import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
const run = (env: Record<string, string>) => {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...rest } = process.env
  return spawnSync(process.execPath, [join(root, "bench", "gatewayPieces.ts")], { cwd: root, encoding: "utf8", timeout: 120_000, env: { ...rest, ...env } })
}

describe("bench/gatewayPieces: pieces of a relayed call's CPU, this checkout against a base one", () => {
  it("prints each piece's CPU per call for both checkouts (embedded storage, a short run)", () => {
    const out = run({ BENCH_PIECES_BASE_ROOT: root, BENCH_PIECES_CALLS: "20", BENCH_PIECES_ROUNDS: "1" })
    expect(out.status, out.stderr).toBe(0)
    for (const piece of ["idempotency look-up of one key", "attestation check + countersignature", "SHA-256 digests of one call"]) {
      for (const label of ["base", "this"]) {
        expect(out.stdout).toMatch(new RegExp(`${piece.replace(/[+]/g, "\\+")} +${label} +[0-9.]+ us CPU`))
      }
    }
    // The look-up's wall time; PostgreSQL's CPU only when it runs on PostgreSQL.
    expect(out.stdout).toMatch(/look-up of one key +this +[0-9.]+ us CPU, wall [0-9.]+ us\n/)
  }, 150_000)

  it("refuses a bad setting before doing anything (exit 2, the setting named)", () => {
    const out = run({ BENCH_PIECES_ROUNDS: "many" })
    expect(out.status).toBe(2)
    expect(out.stderr).toContain("BENCH_PIECES_ROUNDS")
    expect(out.stdout).toBe("")
  }, 60_000)
})
