import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"

const REPO = join(import.meta.dirname, "../..")
const GATEWAY = join(REPO, "programs/gateway.ts")
/** The Deno binary the `deno` npm package installs (package.json devDependencies). */
export const DENO = join(REPO, "node_modules", ".bin", "deno")

/** How to run the gateway program: under this Node (the default) or under Deno with every permission it asks for. */
export type GatewayRuntime = "node" | "deno"

const command = (runtime: GatewayRuntime): [string, Array<string>] => {
  if (runtime === "node") return [process.execPath, [GATEWAY]]
  // Missing Deno is a failure, never a skip: the production-shape promise is that the gateway runs under Deno.
  if (!existsSync(DENO)) throw new Error(`Deno is missing at ${DENO}: run npm install (the deno package is a devDependency)`)
  return [DENO, ["run", "-A", "--config", join(REPO, "deno.json"), GATEWAY]]
}

/** `programs/gateway.ts` as a child process, with everything it printed so far. */
export interface GatewayProcess {
  readonly child: ChildProcess
  readonly url: string
  /** stdout and stderr as printed, in order of arrival. */
  readonly output: () => string
}

/** Starts the gateway program and resolves with its URL from the "gateway listening" log line. */
export const startGatewayProcess = (env: Record<string, string>, runtime: GatewayRuntime = "node") =>
  new Promise<GatewayProcess>((resolve, reject) => {
    const [executable, args] = command(runtime)
    const child = spawn(executable, args, {
      cwd: REPO,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
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

/** Stops a gateway started by startGatewayProcess the way an orchestrator does (SIGTERM: it drains) and waits for its exit; nothing to do if it never started or already exited. */
export const stopGatewayProcess = async (gateway: GatewayProcess | undefined) => {
  if (gateway === undefined) return
  if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill("SIGTERM")
  await exited(gateway.child)
}
