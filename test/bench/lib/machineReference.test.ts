import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import {
  DISTURBED_FOREIGN_CORES,
  disturbanceWarnings,
  ecdsaP256SignMicros,
  foreignCores,
  machineBusyMs,
  ownCpuMs
} from "../../../bench/lib/machineReference.ts"

describe("bench machine reference", () => {
  it("foreignCores is the machine's busy time minus the run's own, per wall millisecond, never negative", () => {
    expect(foreignCores(3_000, 1_000, 2_000)).toBe(1)
    expect(foreignCores(1_000, 1_200, 2_000)).toBe(0) // tick rounding can make own > machine
    expect(Number.isNaN(foreignCores(Number.NaN, 0, 1_000))).toBe(true)
    expect(Number.isNaN(foreignCores(1_000, 0, 0))).toBe(true)
  })

  it("a busy process outside the run reads as about one foreign core", async () => {
    const spinner = spawn(process.execPath, ["-e", "const end = Date.now() + 1500; while (Date.now() < end) {}"], { stdio: "ignore" })
    await new Promise((r) => setTimeout(r, 200)) // the child is spinning
    const busy0 = machineBusyMs()
    const own0 = ownCpuMs()
    const t0 = performance.now()
    await new Promise((r) => setTimeout(r, 1_000))
    const cores = foreignCores(machineBusyMs() - busy0, ownCpuMs() - own0, performance.now() - t0)
    await new Promise((r) => spinner.once("exit", r))
    // At least most of a core (the spinner), whatever else the machine was doing.
    expect(cores).toBeGreaterThan(0.7)
  })

  it("disturbanceWarnings names only the phases over the threshold", () => {
    const phase = { round: 2, stream: false, concurrency: 16, target: "gateway" }
    const warnings = disturbanceWarnings([
      { ...phase, foreignCpuCores: DISTURBED_FOREIGN_CORES + 0.5 },
      { ...phase, target: "bare", foreignCpuCores: DISTURBED_FOREIGN_CORES / 2 },
      { ...phase, target: "direct" }
    ])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^round 2 json c=16 gateway: other processes used 0\.70 of \d+ cores/)
  })

  it("ecdsaP256SignMicros measures a real signature: positive and well under a millisecond", () => {
    const micros = ecdsaP256SignMicros(4)
    expect(micros).toBeGreaterThan(1)
    expect(micros).toBeLessThan(5_000)
  })
})
