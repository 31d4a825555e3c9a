/**
 * The servers under test, each a separate Node process (so their CPU and memory are their own), started with
 * settings in the environment only (never secrets on argv) and stopped by the PID this module recorded.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"

export interface ServerProcess {
  readonly name: string
  readonly pid: number
  readonly child: ChildProcess
  /** stdout+stderr, last 64 KiB, for diagnosing a failed start */
  output(): string
  stop(): Promise<void>
}

const started = new Set<ServerProcess>()

/** Spawns `node <script>` (the running Node 24, so TypeScript runs natively). */
export const startNodeProcess = (
  name: string,
  script: string,
  env: Record<string, string | undefined>,
  nodeFlags: ReadonlyArray<string> = [],
  args: ReadonlyArray<string> = []
): ServerProcess => {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] })
  if (child.pid === undefined) throw new Error(`could not start ${name}`)
  let log = ""
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-65_536)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const proc: ServerProcess = {
    name,
    pid: child.pid,
    child,
    output: () => log,
    stop: () => stopChild(proc)
  }
  started.add(proc)
  return proc
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/** SIGTERM, then SIGKILL after 5 s; only ever the PID we spawned. */
const stopChild = async (proc: ServerProcess): Promise<void> => {
  started.delete(proc)
  const { child } = proc
  if (exited(child)) return
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  process.kill(proc.pid, "SIGTERM")
  const timer = setTimeout(() => {
    if (!exited(child)) process.kill(proc.pid, "SIGKILL")
  }, 5_000)
  await gone
  clearTimeout(timer)
}

/** Stops every process this module started (on normal exit, on error and on SIGINT). */
export const stopAll = async (): Promise<void> => {
  await Promise.all([...started].map((p) => p.stop().catch(() => {})))
}

/** Synchronous last resort for `process.on("exit")`: SIGKILL whatever is still running. */
export const killAllSync = (): void => {
  for (const p of started) {
    if (!exited(p.child)) {
      try {
        process.kill(p.pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Resolves the `url` of the first stdout JSON line that has one: top level (the fake provider and bare proxy print
 * it) or in `annotations` (the local proxy's `listening` log line).
 */
export const waitForUrlLine = (proc: ServerProcess, timeoutMs: number): Promise<string> =>
  new Promise((resolve, reject) => {
    let buffer = ""
    const timer = setTimeout(() => reject(new Error(`${proc.name} did not report its url within ${timeoutMs} ms:\n${proc.output()}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      for (const line of buffer.split("\n").slice(0, -1)) {
        try {
          const parsed = JSON.parse(line) as { url?: unknown; annotations?: { url?: unknown } }
          const url = parsed.url ?? parsed.annotations?.url
          if (typeof url === "string") {
            clearTimeout(timer)
            proc.child.stdout!.off("data", onData)
            resolve(url)
            return
          }
        } catch {
          // not a JSON line
        }
      }
    }
    proc.child.stdout!.on("data", onData)
    proc.child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${proc.name} exited with ${code} before reporting its url:\n${proc.output()}`))
    })
  })

/** Polls `GET url` until it answers 200. */
export const waitForHealthy = async (proc: ServerProcess, url: string, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (exited(proc.child)) throw new Error(`${proc.name} exited with ${proc.child.exitCode}:\n${proc.output()}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${proc.name} was not healthy at ${url} within ${timeoutMs} ms:\n${proc.output()}`)
}

/** A port that was free a moment ago on 127.0.0.1 (the gateway does not print its address at LOG_LEVEL=warn). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Resident set size now and the process's high-water mark, in KiB, from /proc (Linux only; 0 elsewhere). */
export const memoryOf = (pid: number): { rssKiB: number; hwmKiB: number } => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0)
    return { rssKiB: field("VmRSS"), hwmKiB: field("VmHWM") }
  } catch {
    return { rssKiB: 0, hwmKiB: 0 }
  }
}

/** Samples each process's RSS every 100 ms; `peakKiB` is the largest sample since `reset`. */
export class RssSampler {
  private peaks = new Map<number, number>()
  private timer: NodeJS.Timeout | undefined
  private readonly pids: ReadonlyArray<number>
  constructor(pids: ReadonlyArray<number>) {
    this.pids = pids
  }
  start(): void {
    this.reset()
    this.timer = setInterval(() => this.sample(), 100)
    this.timer.unref()
  }
  reset(): void {
    this.peaks = new Map(this.pids.map((p) => [p, 0]))
    this.sample()
  }
  sample(): void {
    for (const pid of this.pids) {
      const { rssKiB } = memoryOf(pid)
      if (rssKiB > (this.peaks.get(pid) ?? 0)) this.peaks.set(pid, rssKiB)
    }
  }
  peakKiB(pid: number): number {
    return this.peaks.get(pid) ?? 0
  }
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
  }
}

/** User+system CPU time the process has used so far, in milliseconds (Linux /proc; 0 elsewhere). */
export const cpuMsOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th of them, in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return 0
  }
}

/**
 * CPU time used so far by every local process whose command name is one of `names` (e.g. the PostgreSQL server and
 * its backends, redis-server), in milliseconds. The gateway's pool connections are long-lived backends, so the
 * difference over a phase is the storage servers' work for that phase (processes that exit in between are missed).
 */
export const cpuMsOfCommands = (names: ReadonlyArray<string>): number => {
  let total = 0
  let entries: Array<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return 0
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim()
      if (names.includes(comm)) total += cpuMsOf(Number(entry))
    } catch {
      // the process exited while we looked
    }
  }
  return total
}
