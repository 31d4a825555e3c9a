import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")

describe("bench/effectCounts: the Effect runtime's work per HTTP request, printed on SIGUSR2", () => {
  it("counts requests, fibers, run-loop entries, operations and scheduler turns, then starts again", () => {
    // Two requests to a plain node:http server, each answered from a forked fiber that yields once; then SIGUSR2 twice.
    const script = `
      import { Effect, Fiber } from "effect"
      import http from "node:http"
      const server = http.createServer((req, res) => {
        Effect.runPromise(Effect.gen(function*() {
          const f = yield* Effect.forkChild(Effect.succeed(1))
          yield* Effect.yieldNow
          return yield* Fiber.join(f)
        })).then(() => res.end("ok"))
      })
      server.listen(0, "127.0.0.1", async () => {
        const url = "http://127.0.0.1:" + server.address().port
        for (let i = 0; i < 2; i++) await (await fetch(url)).text()
        process.kill(process.pid, "SIGUSR2")
        await new Promise((r) => setTimeout(r, 50))
        process.kill(process.pid, "SIGUSR2")
        await new Promise((r) => setTimeout(r, 50))
        server.close()
      })`
    const run = spawnSync(process.execPath, ["--import", join(root, "bench", "effectCounts.ts"), "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      timeout: 30_000
    })
    expect(run.status, run.stderr).toBe(0)
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("effect-count "))
    expect(lines).toHaveLength(2)
    const [first, second] = lines.map((l) => JSON.parse(l.slice("effect-count ".length, l.indexOf(" per request "))))
    expect(first.requests).toBe(2)
    // Per request at least: the program's fiber and its child, the child's run and the parent's resumption after
    // the yield, and that yield's scheduler turn.
    expect(first.fibers).toBeGreaterThanOrEqual(4)
    expect(first.runLoops).toBeGreaterThanOrEqual(6)
    expect(first.ops).toBeGreaterThan(first.runLoops)
    expect(first.immediates).toBeGreaterThanOrEqual(2)
    expect(lines[0]).toContain(`per request {"requests":1,`)
    expect(second).toEqual({ requests: 0, fibers: 0, runLoops: 0, ops: 0, immediates: 0 })
  }, 60_000)
})
