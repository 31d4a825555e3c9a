/**
 * How a benchmark program reads its settings: its schema (bench/settings/<program>.ts) is read whole by
 * `readBenchSettings` before the program starts any server or child process, with the settings machinery every
 * program of the project uses (sdks/typescript/src/wire/config/setting.ts). A bad value stops the program with exit
 * status 2 and one line on stderr, `<program>: BENCH_ROUNDS must be a whole number from 1 to 20, got "three"`, where
 * a raw `Number(process.env.BENCH_ROUNDS)` used to run a benchmark of NaN rounds.
 *
 * Here too: the two builders the bench needs beyond the machinery's (a comma-separated list whose entries are each
 * one setting's value, and a number whose default changes under BENCH_QUICK=1), both made of Settings, and the
 * settings several programs share (BENCH_IDEMPOTENCY, the storage URLs). docs/benchmark.md is tested against the
 * schemas (test/docs/benchmarkSettings.test.ts).
 */
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import {
  ConfigInvalid,
  custom,
  type Env,
  nonEmpty,
  onOff,
  readSettings,
  type Schema,
  type Setting,
  type SettingsOf
} from "../../sdks/typescript/src/wire/config/setting.ts"

/** A usage error, like the demo's: the program was asked for something it cannot do, nothing was started. */
export const BAD_SETTING_EXIT_STATUS = 2

/** Every setting of `schema` from `env`; on a bad value, one line on stderr naming `program` and exit status 2. */
export const readBenchSettings = <S extends Schema>(program: string, schema: S, env: Env = process.env): SettingsOf<S> => {
  try {
    return readSettings(schema, env)
  } catch (error) {
    if (!(error instanceof ConfigInvalid)) throw error
    process.stderr.write(`${program}: ${error.message}\n`)
    return process.exit(BAD_SETTING_EXIT_STATUS)
  }
}

/**
 * A comma-separated list (`1,16,64`), each entry parsed by `entry` (a Setting of the same variable, so a list of
 * numbers says what a number may be exactly as a single number does). Blank or unset is `fallback`; a blank entry
 * (`1,,16`) is refused, not read as the entry's default. `count` asks for exactly that many entries.
 */
export const listOf = <A>(entry: Setting<A>, fallback: string, options: { readonly count?: number } = {}): Setting<ReadonlyArray<A>> => {
  const { count } = options
  const allowed = count === undefined
    ? `a comma-separated list, each ${entry.allowed}`
    : `${count} comma-separated entries, each ${entry.allowed}`
  const parse = (value: string, fail: () => never): ReadonlyArray<A> => {
    const entries = value.split(",").map((s) => s.trim())
    if (entries.some((s) => s === "") || (count !== undefined && entries.length !== count)) return fail()
    return entries.map((s) => {
      try {
        return entry.read({ [entry.name]: s })
      } catch (error) {
        if (error instanceof ConfigInvalid) return fail()
        throw error
      }
    })
  }
  const fallbackList = fallback === "" ? [] : parse(fallback, () => {
    throw new Error(`${entry.name}: the default ${fallback} is not ${allowed}`)
  })
  return custom(entry.name, allowed, fallback === "" ? "none" : fallback, (raw, fail) => {
    const value = nonEmpty(raw)
    return value === undefined ? fallbackList : parse(value, () => fail(raw))
  })
}

/** BENCH_QUICK=1: shorter defaults for `npm run bench` (any setting given explicitly still wins). */
export const BENCH_QUICK = onOff("BENCH_QUICK", false)

/** `normal`'s variable, with `quick`'s default under BENCH_QUICK=1 (both Settings of the same variable and rule). */
export const quickDefault = <A>(normal: Setting<A>, quick: Setting<A>): Setting<A> => ({
  ...normal,
  fallback: `${normal.fallback} (${quick.fallback} with BENCH_QUICK=1)`,
  read: (env) => (BENCH_QUICK.read(env) ? quick : normal).read(env)
})

/**
 * A checkout of this repository (a folder holding `program`, e.g. programs/proxy.ts), resolved from the current
 * folder; checked at start so a typo does not surface after the other servers are up. Blank or unset: none.
 */
export const checkout = (name: string, program: string): Setting<string | undefined> =>
  custom(name, `a folder holding a checkout of this repository (with ${program})`, "unset", (raw, fail) => {
    const value = nonEmpty(raw)
    if (value === undefined) return undefined
    const folder = resolve(value)
    return existsSync(join(folder, program)) ? folder : fail(raw)
  })

/** A URL with one of `schemes` (blank or unset: none; `required`: refused when missing). */
const serverUrl = (name: string, schemes: ReadonlyArray<string>, required: boolean): Setting<string | undefined> =>
  custom(name, `a ${schemes.map((s) => `${s}//`).join(" or ")} URL${required ? "" : " (or unset)"}`, required ? "unset (required)" : "unset", (raw, fail) => {
    const value = nonEmpty(raw)
    if (value === undefined) return required ? fail() : undefined
    try {
      return schemes.includes(new URL(value).protocol) ? value : fail(raw)
    } catch {
      return fail(raw)
    }
  })

/**
 * Where the benchmarked gateway keeps its state (bench/lib/storage.ts): PostgreSQL and Redis when set (a fresh
 * database and key prefix, dropped afterwards), else embedded storage. `required` for a program that only makes sense
 * on both (bench/roundTrips.ts).
 */
export const benchStorageSettings = (required = false) => ({
  databaseUrl: serverUrl("DATABASE_URL", ["postgres:", "postgresql:"], required),
  redisUrl: serverUrl("REDIS_URL", ["redis:", "rediss:"], required)
})

/** What createBenchStorage (bench/lib/storage.ts) reads, from settings already read. */
export const storageEnv = (settings: { readonly databaseUrl: string | undefined; readonly redisUrl: string | undefined }): Env => ({
  DATABASE_URL: settings.databaseUrl,
  REDIS_URL: settings.redisUrl
})

/**
 * Every gateway request of the bench (bench/lib/attested.ts) carries its own Idempotency-Key, the idempotency issue's
 * condition for the targets; off leaves the header off, to see what idempotency costs.
 */
export const BENCH_IDEMPOTENCY = onOff("BENCH_IDEMPOTENCY", true)

/**
 * Options given on the command line (`npm run bench:files -- --runs 5`) as the environment a schema reads: a setting
 * named after its option (`--runs`) gets the argument after it. An option given without a value gets `(no value)`, so
 * its setting refuses it instead of falling back to its default.
 */
export const commandLineOptions = (argv: ReadonlyArray<string>, schema: Schema): Env =>
  Object.fromEntries(
    Object.values(schema).flatMap((setting) => {
      const at = argv.indexOf(setting.name)
      if (at < 0) return []
      const value = argv[at + 1]
      return [[setting.name, value === undefined || value.startsWith("--") ? "(no value)" : value]]
    })
  )
