/**
 * Times the built-in name model alone (issue 40: a 2 KB prompt <= 0.3 ms p50, 100 KB <= 30 ms, linear in length), on
 * the calling thread, on the same prose as the engine rows of `npm run bench:engine`.
 */
import { builtinNameModel, loadBuiltinNameModel } from "../../sdks/typescript/src/tokeniser/builtinNameModel.ts"
import { proseText } from "./sampleText.ts"
import { median } from "./stats.ts"

export interface NameModelTiming {
  readonly prompt2kP50Ms: number
  readonly prompt2kP95Ms: number
  /** CPU time of the process per call, p50 (wall time on a loaded machine includes waiting for a core). */
  readonly prompt2kCpuP50Ms: number
  /** Median of `runs` calls per size (10 KB, 100 KB, 1 MB): wall and CPU time. */
  readonly sizes: ReadonlyArray<{ readonly bytes: number; readonly ms: number; readonly cpuMs: number; readonly msPerMB: number; readonly cpuMsPerMB: number; readonly names: number }>
}

const MB = 1024 * 1024

export const timeNameModel = async (runs: number): Promise<NameModelTiming> => {
  await loadBuiltinNameModel()
  const prompt = proseText(2048, 3)
  const times: Array<number> = []
  const cpuTimes: Array<number> = []
  // The first 200 calls compile the hot paths; the next 1,000 are measured.
  for (let i = 0; i < 1200; i++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    await builtinNameModel.detect(prompt)
    const used = process.cpuUsage(c0)
    if (i >= 200) {
      times.push(performance.now() - t0)
      cpuTimes.push((used.user + used.system) / 1000)
    }
  }
  times.sort((a, b) => a - b)
  const sizes = []
  for (const bytes of [10 * 1024, 100 * 1024, MB]) {
    const text = proseText(bytes, 5)
    const each: Array<number> = []
    const cpu: Array<number> = []
    let names = 0
    for (let i = 0; i < Math.max(3, runs); i++) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      names = (await builtinNameModel.detect(text)).length
      each.push(performance.now() - t0)
      const used = process.cpuUsage(c0)
      cpu.push((used.user + used.system) / 1000)
    }
    const ms = median(each)
    const cpuMs = median(cpu)
    sizes.push({ bytes, ms, cpuMs, msPerMB: (ms / bytes) * MB, cpuMsPerMB: (cpuMs / bytes) * MB, names })
  }
  return {
    prompt2kP50Ms: times[Math.floor(times.length / 2)]!,
    prompt2kP95Ms: times[Math.floor(times.length * 0.95)]!,
    prompt2kCpuP50Ms: median(cpuTimes),
    sizes
  }
}
