// Issue 33 item 3, the benchmark programs: a bad setting stops `node bench/<program>.ts` at start, with exit status 2,
// exactly one line on stderr (`bench/run.ts: BENCH_ROUNDS must be ..., got "three"`) and nothing started. "Nothing
// started" is observed, not inferred: every child runs with a preload that records each `listen` of Node's net module
// and each child process it spawns to a file (test/support/runWithStartProbe.ts); the bench programs start their servers
// (fake provider, gateway, stub gateway, proxies) as child processes, so an empty record means none was started.
// One case per kind of setting: number, list, on/off, enum, a list of exactly two, a pattern, a URL, a checkout folder.
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runWithStartProbe, START_PROBE, type StartProbeRun } from "../support/runWithStartProbe.ts"

const ROOT = join(import.meta.dirname, "../..")
const dir = mkdtempSync(join(tmpdir(), "pr-bench-settings-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** `node <args>` with `env` under the start probe, until it exits. */
const run = (args: ReadonlyArray<string>, env: Record<string, string>) => runWithStartProbe(args, env, dir)

/** Exit status 2, the one line `<program>: <message>`, nothing on stdout, nothing listened or spawned. */
const expectRefusal = (stopped: StartProbeRun, program: string, message: string) => {
  expect(stopped.stderrLines).toEqual([`${program}: ${message}`])
  expect(stopped.code).toBe(2)
  expect(stopped.stdout).toBe("")
  expect(stopped.started).toEqual([])
}

describe("the probe records what a program starts (so an empty record means nothing started)", () => {
  it("a child process spawned through the ESM import bench/lib/processes.ts uses", async () => {
    const stopped = await run(["--input-type=module", "-e", "import { spawn } from 'node:child_process'; spawn(process.execPath, ['-e', ''])"], {})
    expect(stopped.code).toBe(0)
    expect(stopped.started).toEqual([`spawn ${process.execPath}`])
  }, 60_000)

  it("a listen: the bare hop (bench/bare-proxy.ts) with good settings listens, and the probe records it", async () => {
    const probeFile = join(dir, "started-good.log")
    const child = spawn(process.execPath, ["--import", START_PROBE, "bench/bare-proxy.ts"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", LISTEN_PROBE_FILE: probeFile, BARE_UPSTREAM_URL: "http://127.0.0.1:9", PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk) => {
        stdout += chunk
        if (stdout.includes("bare proxy listening")) resolve()
      })
      child.once("exit", (code) => reject(new Error(`the bare hop exited ${code}`)))
    })
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await exited
    expect(readFileSync(probeFile, "utf8")).toMatch(/^listen 0 127\.0\.0\.1$/m)
  }, 60_000)
})

describe("npm run bench (bench/run.ts): a bad setting stops it before it starts any server", () => {
  it("number: BENCH_ROUNDS=three (it was NaN rounds before)", async () => {
    expectRefusal(await run(["bench/run.ts"], { BENCH_ROUNDS: "three" }), "bench/run.ts", 'BENCH_ROUNDS must be a whole number from 1 to 20, got "three"')
  }, 60_000)

  it("number under BENCH_QUICK=1: BENCH_SECONDS=0.1, below the range", async () => {
    expectRefusal(
      await run(["bench/run.ts"], { BENCH_QUICK: "1", BENCH_SECONDS: "0.1" }),
      "bench/run.ts",
      'BENCH_SECONDS must be a number of seconds from 0.2 to 120, got "0.1"'
    )
  }, 60_000)

  it("list: BENCH_CONCURRENCY=1,sixteen", async () => {
    expectRefusal(
      await run(["bench/run.ts"], { BENCH_CONCURRENCY: "1,sixteen" }),
      "bench/run.ts",
      'BENCH_CONCURRENCY must be a comma-separated list, each a whole number from 1 to 512, got "1,sixteen"'
    )
  }, 60_000)

  it("on/off: BENCH_PROXY=maybe (anything but 0 used to mean on)", async () => {
    expectRefusal(await run(["bench/run.ts"], { BENCH_PROXY: "maybe" }), "bench/run.ts", 'BENCH_PROXY must be on or off, got "maybe"')
  }, 60_000)

  it("enum: BENCH_PROFILE=cpu (it used to mean no profile, silently)", async () => {
    expectRefusal(
      await run(["bench/run.ts"], { BENCH_PROFILE: "cpu" }),
      "bench/run.ts",
      'BENCH_PROFILE must be 1 (the gateway), proxy (the two proxies) or 0 (none), got "cpu"'
    )
  }, 60_000)

  it("URL: DATABASE_URL with another scheme, its value not echoed (it may carry a password)", async () => {
    const stopped = await run(["bench/run.ts"], { DATABASE_URL: "mysql://bench:secret@127.0.0.1/db" })
    expectRefusal(stopped, "bench/run.ts", "DATABASE_URL must be a postgres:// or postgresql:// URL (or unset)")
    expect(stopped.stderrLines.join("\n")).not.toContain("secret")
  }, 60_000)
})

describe("the other benchmark programs refuse the same way", () => {
  it("npm run bench:proxy-cpu, enum: BENCH_NAMES=spacy (the stub gateway is never started)", async () => {
    expectRefusal(await run(["bench/proxyCpu.ts"], { BENCH_NAMES: "spacy" }), "bench/proxyCpu.ts", 'BENCH_NAMES must be one of off, builtin, got "spacy"')
  }, 60_000)

  it("npm run bench:proxy-cpu, checkout folder: BENCH_PROXY_ROOTS naming a folder without the proxy", async () => {
    expectRefusal(
      await run(["bench/proxyCpu.ts"], { BENCH_PROXY_ROOTS: ".,docs" }),
      "bench/proxyCpu.ts",
      'BENCH_PROXY_ROOTS must be a comma-separated list, each a folder holding a checkout of this repository (with programs/proxy.ts), got ".,docs"'
    )
  }, 60_000)

  it("npm run bench:timeline, on/off: BENCH_TIMELINE_STREAM=maybe (its span collector never listens)", async () => {
    expectRefusal(await run(["bench/timeline.ts"], { BENCH_TIMELINE_STREAM: "maybe" }), "bench/timeline.ts", 'BENCH_TIMELINE_STREAM must be on or off, got "maybe"')
  }, 60_000)

  it("npm run bench:paired, a list of exactly two: BENCH_PAIRED_KINDS=chat-json", async () => {
    expectRefusal(
      await run(["bench/pairedRoutes.ts"], { BENCH_PAIRED_KINDS: "chat-json" }),
      "bench/pairedRoutes.ts",
      'BENCH_PAIRED_KINDS must be 2 comma-separated entries, each one of chat-stream, responses-stream, chat-json, responses-json, got "chat-json"'
    )
  }, 60_000)

  it("bench/frontStages.ts, pattern: FRONT_HOLD=200-json:soon", async () => {
    expectRefusal(
      await run(["bench/frontStages.ts"], { FRONT_HOLD: "200-json:soon" }),
      "bench/frontStages.ts",
      'FRONT_HOLD must be <kind>:<seconds>, such as 200-json:60 (kinds: healthz, 401, 403, 200-json, 200-stream, 200-json-noidem), got "200-json:soon"'
    )
  }, 60_000)

  it("npm run bench:mcp, list of parts: BENCH_MCP_ONLY=stdio,web (no MCP server is started)", async () => {
    expectRefusal(
      await run(["bench/mcp.ts"], { BENCH_MCP_ONLY: "stdio,web" }),
      "bench/mcp.ts",
      'BENCH_MCP_ONLY must be a comma-separated list, each one of stdio, http, startup, ocr, got "stdio,web"'
    )
  }, 60_000)

  it("the stub gateway (bench/lib/stubGateway.ts), a server itself: STUB_GATEWAY_DELAY_MS=1s, and it never listens", async () => {
    expectRefusal(
      await run(["bench/lib/stubGateway.ts"], { STUB_GATEWAY_DELAY_MS: "1s" }),
      "bench/lib/stubGateway.ts",
      'STUB_GATEWAY_DELAY_MS must be a whole number of milliseconds from 0 to 60000, got "1s"'
    )
  }, 60_000)

  it("npm run bench:files, an option on the command line: --runs three (it used to be NaN runs)", async () => {
    expectRefusal(await run(["bench/files.ts", "--runs", "three"], {}), "bench/files.ts", '--runs must be a whole number, 2 or more, got "three"')
  }, 60_000)

  it("bench/roundTrips.ts without the PostgreSQL and Redis it counts: DATABASE_URL required", async () => {
    expectRefusal(await run(["bench/roundTrips.ts"], {}), "bench/roundTrips.ts", "DATABASE_URL must be a postgres:// or postgresql:// URL")
  }, 60_000)

  it("bench/settleStatement.ts, a migration it does not have: BENCH_SQL_BASE_UPTO=0099_none (no database is created)", async () => {
    expectRefusal(
      await run(["bench/settleStatement.ts"], { DATABASE_URL: "postgres://127.0.0.1:9/none", BENCH_SQL_BASE_UPTO: "0099_none" }),
      "bench/settleStatement.ts",
      'BENCH_SQL_BASE_UPTO must be the name of a migration in migrations/index.ts, such as 0023_scim, got "0099_none"'
    )
  }, 60_000)
})
