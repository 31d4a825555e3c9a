// Issue 32 item 9: `npm run starter` stopped with SIGTERM (`kill <pid of npm>`, as `timeout` or a process manager
// sends it) left `node starter-kit/server.ts` running and holding its port: npm signals only the `sh -c` it runs the
// script in, and that shell dies without passing the signal on. Every long-running npm script now stops whole.
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createConnection } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")
const work = mkdtempSync(join(tmpdir(), "pr-npm-stop-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** Whether any process of the process group `pgid` is still alive. */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

const portOpen = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = createConnection(Number(port), hostname)
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

/**
 * Runs `npm run <script>` in its own process group (as a terminal or a process manager starts it), waits for the line
 * with the URL it listens on, sends `signal` to npm's PID only, and reports whether anything it started survived.
 */
const runAndStop = async (script: string, env: Record<string, string>, signal: NodeJS.Signals, listening: RegExp) => {
  const child = spawn("npm", ["run", "--silent", script], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: work, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d
      const m = listening.exec(output)
      if (m) resolve(m[1]!)
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", () => reject(new Error(`npm run ${script} exited early:\n${output}`)))
  })
  expect(await portOpen(url)).toBe(true)
  process.kill(child.pid!, signal)
  const deadline = Date.now() + 10_000
  while (groupAlive(child.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  const survived = groupAlive(child.pid!)
  if (survived) output += (await import("node:child_process")).execSync(`ps -o pid,ppid,pgid,stat,cmd -g ${child.pid}`).toString()
  if (survived) process.kill(-child.pid!, "SIGKILL") // leave nothing behind, whatever the outcome
  return { survived, portStillOpen: await portOpen(url), output }
}

describe("an npm script stopped by a signal to npm stops everything it started", () => {
  it("npm run starter, SIGTERM to npm (kill, timeout, a process manager): the build-and-serve command ends and the port is free", async () => {
    const key = join(work, "gateway-key")
    writeFileSync(key, `svc_${"a".repeat(52)}\n`, { mode: 0o600 })
    const result = await runAndStop(
      "starter",
      { GATEWAY_URL: "http://127.0.0.1:9", GATEWAY_KEY_FILE: key, STARTER_PORT: "0", STARTER_APP_DIR: join(work, "app") },
      "SIGTERM",
      /"url":"(http:\/\/127\.0\.0\.1:\d+)"/
    )
    expect(result.survived, result.output).toBe(false)
    expect(result.portStillOpen).toBe(false)
  }, 180_000)

  it("npm start (gateway and fake provider), SIGTERM to npm: both stop and free their ports", async () => {
    const result = await runAndStop("start", { PORT: "0", FAKE_PROVIDER_PORT: "0", DATA_DIR: join(work, "data") }, "SIGTERM", /"message":"gateway listening".*?"url":"(http:\/\/127\.0\.0\.1:\d+)"/)
    expect(result.survived, result.output).toBe(false)
    expect(result.portStillOpen).toBe(false)
  }, 180_000)

  // SIGKILL cannot be passed on: the program notices that npm is gone and stops itself (sdks/typescript/src/wire/node/stopWithParent.ts).
  for (const signal of ["SIGTERM", "SIGINT", "SIGKILL"] as const) {
    it(`npm run fake-provider, ${signal} to npm`, async () => {
      const result = await runAndStop("fake-provider", { FAKE_PROVIDER_PORT: "0" }, signal, /"url":"(http:\/\/127\.0\.0\.1:\d+)"/)
      expect(result.survived, result.output).toBe(false)
      expect(result.portStillOpen).toBe(false)
    }, 60_000)
  }
})
