import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"

const GATEWAY = join(import.meta.dirname, "../../programs/gateway.ts")

/** `programs/gateway.ts` as a child process, with everything it printed so far. */
export interface GatewayProcess {
  readonly child: ChildProcess
  readonly url: string
  /** stdout and stderr as printed, in order of arrival. */
  readonly output: () => string
}

/** Starts the gateway program and resolves with its URL from the "gateway listening" log line. */
export const startGatewayProcess = (env: Record<string, string>) =>
  new Promise<GatewayProcess>((resolve, reject) => {
    const child = spawn(process.execPath, [GATEWAY], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    // PGlite on disk can take long to open on a loaded machine; a gateway that never starts is killed, not leaked.
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`gateway did not start: ${out}`))
    }, 150_000)
    child.stdout!.on("data", (chunk) => {
      out += chunk
      for (const line of out.split("\n")) {
        if (!line.includes("gateway listening")) continue
        clearTimeout(timer)
        resolve({ child, url: JSON.parse(line).annotations.url.replace("0.0.0.0", "127.0.0.1"), output: () => out })
      }
    })
    child.stderr!.on("data", (chunk) => (out += chunk))
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`gateway exited (${code}): ${out}`))
    })
  })

/** Runs the gateway program expecting it NOT to start: resolves with its exit code and everything it printed. */
export const failedGatewayStart = (env: Record<string, string>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [GATEWAY], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.stdout!.on("data", (chunk) => (output += chunk))
    child.stderr!.on("data", (chunk) => (output += chunk))
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

export const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())))
