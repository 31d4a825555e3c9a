/**
 * What the machine a benchmark ran on could do, measured in the same run, so a figure read on another machine (or on
 * this one on a busier day) can be compared: an ECDSA P-256 signature (the gateway makes three per call), a durable
 * PostgreSQL commit (it makes one before answering), the load average, and how much CPU other processes took during
 * each phase. The bare hop's requests/s, the third reference, is measured by the run itself (target `bare`).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { generateKeyPairSync, sign } from "node:crypto"
import { readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { median } from "./stats.ts"

/** Other processes using more than this share of one core during a phase make its figures suspect. */
export const DISTURBED_FOREIGN_CORES = 0.2

/** Median microseconds of one ECDSA P-256 / SHA-256 signature over a 200-byte message, in batches of 50. */
export const ecdsaP256SignMicros = (batches = 40): number => {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const message = Buffer.alloc(200, 7)
  for (let i = 0; i < 100; i++) sign("sha256", message, privateKey) // warm the code path
  const perBatch: number[] = []
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now()
    for (let i = 0; i < 50; i++) sign("sha256", message, privateKey)
    perBatch.push(((performance.now() - t0) * 1000) / 50)
  }
  return median(perBatch)
}

/**
 * Median milliseconds of one durable commit (a one-row INSERT in its own transaction, synchronous_commit as the server
 * has it) on `databaseUrl`, in a table created and dropped here. One connection, so it is the disk's fsync plus one
 * loopback round trip: the floor under the gateway's settlement.
 */
export const postgresCommitMs = (databaseUrl: string, commits = 200): Promise<number> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = `bench_commit_probe_${process.pid}`
      yield* sql.unsafe(`CREATE TABLE ${table} (n integer NOT NULL)`)
      const times: number[] = []
      for (let i = 0; i < commits; i++) {
        const t0 = performance.now()
        yield* sql.unsafe(`INSERT INTO ${table} (n) VALUES (${i})`)
        times.push(performance.now() - t0)
      }
      yield* sql.unsafe(`DROP TABLE ${table}`)
      return median(times.slice(Math.min(20, commits >> 2))) // the first few warm the connection and the table
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })), Effect.scoped)
  )

/** CPU time every process on the machine has used so far, ms (all cores; /proc/stat's first line, USER_HZ = 100). */
export const machineBusyMs = (): number => {
  try {
    const [user, nice, system, _idle, _iowait, irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
      .split("\n", 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number)
    return (user + nice + system + irq + softirq + (steal ?? 0)) * 10
  } catch {
    return Number.NaN
  }
}

/** This process's own CPU time so far, ms (the load generator: it shares the machine with the servers). */
export const ownCpuMs = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * Cores' worth of CPU that processes outside the run used during a window: the machine's busy time minus the run's
 * own processes' (load generator, servers, storage), over the wall time. Clock-tick resolution (10 ms per process
 * reading) makes values under ~0.05 noise; negative values are clamped to 0.
 */
export const foreignCores = (machineBusyDeltaMs: number, ownDeltaMs: number, wallMs: number): number =>
  wallMs > 0 && Number.isFinite(machineBusyDeltaMs) ? Math.max(0, (machineBusyDeltaMs - ownDeltaMs) / wallMs) : Number.NaN

export interface MachineReference {
  readonly cores: number
  /** median µs of one ECDSA P-256 signature, before the servers start */
  readonly ecdsaP256SignMicros: number
  /** median ms of one durable PostgreSQL commit on the run's database; absent with embedded storage */
  readonly postgresCommitMs?: number
  /** 1/5/15-minute load averages before anything started */
  readonly loadBefore: ReadonlyArray<number>
  /** median of the phases' 1-minute load averages */
  readonly loadDuring: number
}

/** A warning line for each phase whose foreign CPU crossed DISTURBED_FOREIGN_CORES. */
export const disturbanceWarnings = (
  phases: ReadonlyArray<{ readonly round: number; readonly stream: boolean; readonly concurrency: number; readonly target: string; readonly foreignCpuCores?: number }>
): string[] =>
  phases
    .filter((p) => (p.foreignCpuCores ?? 0) > DISTURBED_FOREIGN_CORES)
    .map((p) =>
      `round ${p.round} ${p.stream ? "stream" : "json"} c=${p.concurrency} ${p.target}: other processes used ${p.foreignCpuCores!.toFixed(2)} of ${availableParallelism()} cores during the phase (disturbed: its figures are not comparable)`
    )
