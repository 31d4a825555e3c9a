// bench/lib/benchSettings.ts: the builders the benchmark programs' schemas need beyond the settings machinery's, and
// the settings they share. Each refusal is the one line a program prints before it stops (test/bench/badSettings.test.ts
// runs the programs).
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { BENCH_IDEMPOTENCY, benchStorageSettings, checkout, commandLineOptions, listOf, quickDefault, readBenchSettings } from "../../../bench/lib/benchSettings.ts"
import { ConfigInvalid, numberIn, oneOf } from "../../../sdks/typescript/src/wire/config/setting.ts"

const ROOT = join(import.meta.dirname, "../../..")
const refusal = (read: () => unknown): string => {
  try {
    read()
  } catch (error) {
    if (error instanceof ConfigInvalid) return error.message
    throw error
  }
  throw new Error("no refusal")
}

describe("listOf: a comma-separated list, each entry read by one setting's rule", () => {
  const concurrency = listOf(numberIn("C", { fallback: 1, min: 1, max: 512 }), "1,16,64")

  it("reads each entry by the entry's rule, spaces around entries allowed; blank or unset is the default", () => {
    expect(concurrency.read({ C: "1, 16" })).toEqual([1, 16])
    expect(concurrency.read({})).toEqual([1, 16, 64])
    expect(concurrency.read({ C: "  " })).toEqual([1, 16, 64])
    expect(concurrency.fallback).toBe("1,16,64")
  })

  it("refuses a bad entry and a blank one (not read as the entry's default), naming the variable and the rule", () => {
    expect(refusal(() => concurrency.read({ C: "1,sixteen" }))).toBe('C must be a comma-separated list, each a whole number from 1 to 512, got "1,sixteen"')
    expect(refusal(() => concurrency.read({ C: "1,,16" }))).toBe('C must be a comma-separated list, each a whole number from 1 to 512, got "1,,16"')
    expect(refusal(() => concurrency.read({ C: "1,600" }))).toMatch(/^C must be a comma-separated list/)
  })

  it("an empty default is an empty list; count asks for exactly that many entries", () => {
    expect(listOf(oneOf("P", ["portkey"], "portkey"), "").read({})).toEqual([])
    const two = listOf(oneOf("K", ["a", "b", "c"], "a"), "a,b", { count: 2 })
    expect(two.read({ K: "c,a" })).toEqual(["c", "a"])
    expect(refusal(() => two.read({ K: "a" }))).toBe('K must be 2 comma-separated entries, each one of a, b, c, got "a"')
    expect(refusal(() => two.read({ K: "a,b,c" }))).toBe('K must be 2 comma-separated entries, each one of a, b, c, got "a,b,c"')
  })

  it("a default that breaks the rule is a programming error at schema time, not a refusal at run time", () => {
    expect(() => listOf(numberIn("C", { fallback: 1, min: 1 }), "1,x")).toThrow("C: the default 1,x is not")
  })
})

describe("quickDefault: a default that BENCH_QUICK=1 shortens", () => {
  const seconds = quickDefault(numberIn("S", { fallback: 3, min: 0.2, integer: false }), numberIn("S", { fallback: 1, min: 0.2, integer: false }))

  it("gives the normal default, the quick one under BENCH_QUICK=1, and a value given in either case", () => {
    expect(seconds.read({})).toBe(3)
    expect(seconds.read({ BENCH_QUICK: "1" })).toBe(1)
    expect(seconds.read({ BENCH_QUICK: "on", S: "2.5" })).toBe(2.5)
    expect(seconds.read({ S: "2.5" })).toBe(2.5)
    expect(seconds.fallback).toBe("3 (1 with BENCH_QUICK=1)")
  })

  it("refuses a bad value either way, and a bad BENCH_QUICK", () => {
    expect(refusal(() => seconds.read({ BENCH_QUICK: "1", S: "0" }))).toBe('S must be a number, 0.2 or more, got "0"')
    expect(refusal(() => seconds.read({ BENCH_QUICK: "yes" }))).toBe('BENCH_QUICK must be on or off, got "yes"')
  })
})

describe("checkout: a folder holding a checkout of this repository", () => {
  const root = checkout("R", "programs/proxy.ts")

  it("resolves a checkout from the current folder; unset is none", () => {
    expect(root.read({ R: ROOT })).toBe(ROOT)
    expect(root.read({})).toBeUndefined()
  })

  it("refuses a folder without the program, before anything is started from it", () => {
    expect(refusal(() => root.read({ R: join(ROOT, "docs") }))).toMatch(/^R must be a folder holding a checkout of this repository \(with programs\/proxy\.ts\)/)
  })
})

describe("the settings several programs share", () => {
  it("BENCH_IDEMPOTENCY is on unless turned off", () => {
    expect(BENCH_IDEMPOTENCY.read({})).toBe(true)
    expect(BENCH_IDEMPOTENCY.read({ BENCH_IDEMPOTENCY: "0" })).toBe(false)
    expect(refusal(() => BENCH_IDEMPOTENCY.read({ BENCH_IDEMPOTENCY: "no" }))).toBe('BENCH_IDEMPOTENCY must be on or off, got "no"')
  })

  it("the storage URLs: optional, each with its schemes, never echoed (a URL may carry a password)", () => {
    const storage = benchStorageSettings()
    expect(storage.databaseUrl.read({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" })).toBe("postgres://postgres@127.0.0.1:5432/test")
    expect(storage.redisUrl.read({ REDIS_URL: "redis://127.0.0.1:6379" })).toBe("redis://127.0.0.1:6379")
    expect(storage.databaseUrl.read({ DATABASE_URL: "" })).toBeUndefined()
    expect(refusal(() => storage.redisUrl.read({ REDIS_URL: "http://u:pw@127.0.0.1:6379" }))).toBe("REDIS_URL must be a redis:// or rediss:// URL (or unset)")
    expect(refusal(() => storage.databaseUrl.read({ DATABASE_URL: "not a url" }))).toBe("DATABASE_URL must be a postgres:// or postgresql:// URL (or unset)")
  })

  it("required storage refuses a missing URL", () => {
    expect(refusal(() => benchStorageSettings(true).redisUrl.read({}))).toBe("REDIS_URL must be a redis:// or rediss:// URL")
  })
})

describe("commandLineOptions: options on the command line read by the same settings", () => {
  const schema = { runs: numberIn("--runs", { fallback: 4, min: 2 }) }

  it("gives a setting named after its option the argument after it; an option not given is unset", () => {
    expect(commandLineOptions(["node", "bench/files.ts", "--runs", "7"], schema)).toEqual({ "--runs": "7" })
    expect(commandLineOptions(["node", "bench/files.ts"], schema)).toEqual({})
    expect(readBenchSettings("bench/files.ts", schema, commandLineOptions(["node", "x", "--runs", "7"], schema))).toEqual({ runs: 7 })
  })

  it("an option without its value is refused, not read as the default", () => {
    const env = commandLineOptions(["node", "bench/files.ts", "--runs"], schema)
    expect(refusal(() => schema.runs.read(env))).toBe('--runs must be a whole number, 2 or more, got "(no value)"')
    expect(refusal(() => schema.runs.read(commandLineOptions(["node", "x", "--runs", "--other"], schema)))).toMatch(/got "\(no value\)"$/)
  })
})

describe("readBenchSettings", () => {
  it("returns every setting of a good environment (a bad one stops the program: test/bench/badSettings.test.ts)", () => {
    expect(readBenchSettings("bench/x.ts", { n: numberIn("N", { fallback: 3, min: 1 }) }, { N: "5" })).toEqual({ n: 5 })
  })
})
