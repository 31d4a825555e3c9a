// bench/settings/programs.ts: every benchmark program reads its settings through its schema and nothing else, and
// with nothing set each schema gives the defaults the programs had before they had schemas (the benchmarks must
// read the same).
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { BENCH_PROGRAM_SETTINGS } from "../../../bench/settings/programs.ts"
import { PORTKEY_VERSION } from "../../../bench/lib/portkeyTarget.ts"
import { readSettings, type Schema } from "../../../sdks/typescript/src/wire/config/setting.ts"

const ROOT = join(import.meta.dirname, "../../..")
const BENCH = join(ROOT, "bench")

/** Every TypeScript file under bench/, as a repository path. */
const benchFiles = (dir = BENCH): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === "results" ? [] : benchFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts") ? [relative(ROOT, join(dir, entry.name))] : []
  )

/** The code of a file without its comments (a comment may quote `process.env.X` to say what it replaced). */
const code = (path: string) =>
  readFileSync(join(ROOT, path), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

/** A read of one variable: `process.env.NAME` or `process.env[name]`. */
const RAW_READ = /process\.env(?:\.[A-Za-z_]|\s*\[)/g

describe("every benchmark program reads its settings through its schema", () => {
  it("no file under bench/ reads one variable from process.env (passing the whole environment on to a child is fine)", () => {
    const raw = benchFiles().flatMap((path) => [...code(path).matchAll(RAW_READ)].map(() => path))
    expect(raw, "a new setting goes into the program's schema in bench/settings/ and its table in docs/benchmark.md").toEqual([])
  })

  it("the check notices a raw read", () => {
    const reads = (line: string) => [...line.matchAll(RAW_READ)].length
    expect(reads('const n = Number(process.env.BENCH_ROUNDS ?? "3")')).toBe(1)
    expect(reads("const x = process.env[name]")).toBe(1)
    expect(reads("startNodeProcess(name, script, { ...process.env })")).toBe(0)
    expect(reads("createBenchStorage(process.env)")).toBe(0)
  })

  it("each program that reads settings names itself and reads the schema bench/settings/programs.ts lists for it", async () => {
    const exported = new Map<string, unknown>()
    for (const file of readdirSync(join(BENCH, "settings"))) {
      for (const [name, value] of Object.entries(await import(join(BENCH, "settings", file)) as Record<string, unknown>)) exported.set(name, value)
    }
    const reads = benchFiles().flatMap((path) =>
      [...code(path).matchAll(/readBenchSettings\("([^"]+)", ([A-Z_]+)[,)]/g)].map((m) => ({ path, program: m[1]!, schema: m[2]! }))
    )
    expect(reads.map((r) => r.program).sort()).toEqual(Object.keys(BENCH_PROGRAM_SETTINGS).sort())
    for (const r of reads) {
      expect(r.program, r.path).toBe(r.path)
      expect(exported.get(r.schema), `${r.path} reads ${r.schema}`).toBe(BENCH_PROGRAM_SETTINGS[r.program])
    }
  })
})

const defaults = (program: string, env: Record<string, string> = {}) => readSettings(BENCH_PROGRAM_SETTINGS[program] as Schema, env)

describe("with nothing set, every program runs with the defaults it had before its schema", () => {
  it("npm run bench: 3 rounds of 3 s phases after 0.5 s warm-up, 1.5 s stage probes, c=1,16,64, proxies on, no peers, idempotency keys on, embedded storage", () => {
    expect(defaults("bench/run.ts")).toEqual({
      quick: false,
      seconds: 3,
      warmupSeconds: 0.5,
      rounds: 3,
      stageSeconds: 1.5,
      concurrency: [1, 16, 64],
      proxy: true,
      peers: [],
      portkeyVersion: undefined,
      profile: undefined,
      idempotency: true,
      databaseUrl: undefined,
      redisUrl: undefined
    })
  })

  it("npm run bench with BENCH_QUICK=1: 1 round of 1 s phases, 0.3 s warm-up, no stage probes; a setting given still wins", () => {
    expect(defaults("bench/run.ts", { BENCH_QUICK: "1" })).toMatchObject({ quick: true, seconds: 1, warmupSeconds: 0.3, rounds: 1, stageSeconds: 0 })
    expect(defaults("bench/run.ts", { BENCH_QUICK: "1", BENCH_ROUNDS: "2", BENCH_STAGE_SECONDS: "0.5" })).toMatchObject({ rounds: 2, stageSeconds: 0.5, seconds: 1 })
  })

  it("npm run bench: the values the docs and npm scripts use read as before", () => {
    expect(defaults("bench/run.ts", { BENCH_PEERS: "portkey", BENCH_CONCURRENCY: "1,16" })).toMatchObject({ peers: ["portkey"], concurrency: [1, 16] })
    expect(defaults("bench/run.ts", { BENCH_PROFILE: "1" }).profile).toBe("gateway")
    expect(defaults("bench/run.ts", { BENCH_PROFILE: "proxy" }).profile).toBe("proxy")
    expect(defaults("bench/run.ts", { BENCH_PROXY: "0", BENCH_IDEMPOTENCY: "0" })).toMatchObject({ proxy: false, idempotency: false })
    expect(defaults("bench/run.ts", { BENCH_PORTKEY_VERSION: PORTKEY_VERSION }).portkeyVersion).toBe(PORTKEY_VERSION)
  })

  it("the other programs", () => {
    expect(defaults("bench/timeline.ts")).toMatchObject({ calls: 400, stream: true, idempotency: true })
    expect(defaults("bench/pairedRoutes.ts")).toMatchObject({ kinds: ["chat-stream", "responses-stream"], calls: 1500, block: 50, profile: false })
    expect(defaults("bench/frontStages.ts")).toMatchObject({
      kinds: ["healthz", "401", "403", "200-json"],
      calls: 2000,
      concurrency: 1,
      block: 100,
      baseRoot: undefined,
      hold: undefined,
      pause: 0,
      nodeOptions: undefined,
      nodeFlags: undefined,
      newNodeFlags: undefined,
      gatewayLog: undefined
    })
    expect(defaults("bench/frontStages.ts", { FRONT_HOLD: "200-json:30" }).hold).toEqual({ kind: "200-json", seconds: 30 })
    expect(defaults("bench/settle.ts")).toMatchObject({
      calls: 2000,
      scenarios: [{ concurrency: 1, tenants: 1 }, { concurrency: 16, tenants: 1 }, { concurrency: 16, tenants: 8 }]
    })
    expect(defaults("bench/proxy.ts")).toEqual({ seconds: 4, profile: false })
    expect(defaults("bench/proxyCpu.ts")).toEqual({
      roots: [],
      seconds: 3,
      rounds: 5,
      concurrency: 16,
      names: "builtin",
      stream: false,
      nodeFlags: undefined,
      gatewayDelayMs: 0,
      bare: false
    })
    expect(defaults("bench/proxyCpu.ts", { BENCH_PROXY_ROOTS: ".", BENCH_GATEWAY_DELAY_MS: "4", BENCH_STREAM: "1" })).toMatchObject({ roots: [ROOT], gatewayDelayMs: 4, stream: true })
    expect(defaults("bench/tokeniser.ts")).toEqual({
      sizes: [10 * 1024, 100 * 1024, 1024 * 1024, 10 * 1024 * 1024],
      runs: 3,
      kinds: ["prose", "repeated", "digit-run", "dotted-run", "spaced-digits", "dashed-digits"]
    })
    expect(defaults("bench/sdk.ts")).toEqual({ runs: 200 })
    expect(defaults("bench/mcp.ts")).toEqual({
      stdioCalls: 1000,
      sessions: 50,
      httpCalls: 10000,
      rounds: 6,
      starts: 5,
      ocrCalls: 20,
      only: ["stdio", "http", "startup", "ocr"]
    })
    expect(defaults("bench/egressPolicy.ts")).toEqual({ rounds: 7, calls: 20000 })
    expect(defaults("bench/starter.ts")).toMatchObject({ runs: 10 })
    expect(defaults("bench/lib/stubGateway.ts")).toEqual({ delayMs: 0 })
    expect(defaults("bench/files.ts")).toEqual({ runs: 4 })
    expect(defaults("bench/redactImage.ts")).toEqual({ runs: 5 })
    expect(defaults("bench/bare-proxy.ts", { BARE_UPSTREAM_URL: "http://127.0.0.1:9" })).toEqual({ upstreamUrl: "http://127.0.0.1:9", port: 0 })
  })
})
