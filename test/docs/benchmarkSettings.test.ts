// docs/benchmark.md's "Settings" section against the benchmark programs' schemas (bench/settings/programs.ts), both
// ways: each program has a table, each table lists exactly the variables its program's schema reads, with the schema's
// default and allowed values word for word; no table is for a program that does not exist; and every benchmark
// variable the page names anywhere (BENCH_*, FRONT_*, STUB_GATEWAY_*, BARE_*) is one some program reads.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { BENCH_PROGRAM_SETTINGS } from "../../bench/settings/programs.ts"
import { type Schema, variableNames } from "../../sdks/typescript/src/wire/config/setting.ts"

const doc = readFileSync(new URL("../../docs/benchmark.md", import.meta.url), "utf8")

/** The text from `## Settings` to the next `## ` heading. */
const settingsSection = (text: string): string => {
  const start = text.indexOf("\n## Settings\n")
  expect(start, 'docs/benchmark.md has a "## Settings" section').toBeGreaterThan(0)
  const end = text.indexOf("\n## ", start + 1)
  return text.slice(start, end === -1 ? undefined : end)
}

interface Row {
  readonly variable: string
  readonly fallback: string
  readonly allowed: string
}

/** Each `### Settings of `<program>`` subsection's table rows, by program. */
const tablesOf = (section: string): Map<string, ReadonlyArray<Row>> => {
  const tables = new Map<string, ReadonlyArray<Row>>()
  for (const part of section.split("\n### ").slice(1)) {
    const program = /^Settings of `([^`]+)`/.exec(part)?.[1]
    expect(program, `a subsection heading names its program: ${part.split("\n")[0]}`).toBeDefined()
    const rows = part.split("\n").filter((line) => line.startsWith("| `")).map((line) => {
      const cells = line.split("|").slice(1, -1).map((cell) => cell.trim().replaceAll("`", ""))
      return { variable: cells[0]!, fallback: cells[1]!, allowed: cells[2]! }
    })
    tables.set(program!, rows)
  }
  return tables
}

/** What a schema says of each variable, in the table's terms. */
const expectedRows = (schema: Schema): ReadonlyArray<Row> =>
  Object.values(schema).map((setting) => ({ variable: setting.name, fallback: setting.fallback, allowed: setting.allowed }))

/** The differences between a program's table and its schema (empty when they agree). */
const mismatches = (tables: Map<string, ReadonlyArray<Row>>, program: string, schema: Schema): ReadonlyArray<string> => {
  const rows = tables.get(program)
  if (rows === undefined) return [`${program}: no table`]
  const expected = expectedRows(schema)
  const documented = rows.map((row) => row.variable)
  const read = expected.map((row) => row.variable)
  return [
    ...read.filter((name) => !documented.includes(name)).map((name) => `${program}: ${name} is read but not in the table`),
    ...documented.filter((name) => !read.includes(name)).map((name) => `${program}: ${name} is in the table but not read`),
    ...expected.flatMap((want) => {
      const row = rows.find((r) => r.variable === want.variable)
      if (row === undefined) return []
      return [
        ...(row.fallback === want.fallback ? [] : [`${program}: ${want.variable} default is "${want.fallback}", the table says "${row.fallback}"`]),
        ...(row.allowed === want.allowed ? [] : [`${program}: ${want.variable} allows "${want.allowed}", the table says "${row.allowed}"`])
      ]
    })
  ]
}

const BENCH_VARIABLE = /`((?:BENCH|FRONT|STUB_GATEWAY|BARE)_[A-Z0-9_]+)(?:=[^`]*)?`/g

describe("docs/benchmark.md documents every benchmark program's settings schema", () => {
  const tables = tablesOf(settingsSection(doc))

  it("every program has a table listing exactly its settings, each with the schema's default and allowed values", () => {
    expect(Object.entries(BENCH_PROGRAM_SETTINGS).flatMap(([program, schema]) => mismatches(tables, program, schema))).toEqual([])
  })

  it("every table is for a program that has a schema", () => {
    expect([...tables.keys()].filter((program) => !(program in BENCH_PROGRAM_SETTINGS))).toEqual([])
  })

  it("every benchmark variable the page names is one some program reads", () => {
    const read = new Set(Object.values(BENCH_PROGRAM_SETTINGS).flatMap((schema) => variableNames(schema)))
    const named = new Set([...doc.matchAll(BENCH_VARIABLE)].map((m) => m[1]!))
    expect([...named].filter((name) => !read.has(name))).toEqual([])
  })

  it("the check notices a setting nobody documented, a documented one nothing reads and a changed default", () => {
    const edited = settingsSection(doc)
      .replace(/\n\| `BENCH_TIMELINE_STREAM` [^\n]*/, "")
      .replace("| `BENCH_RUNS` | 200 |", "| `BENCH_RUNS` | 100 |")
      .replace(/(\n\| `BENCH_CALLS` [^\n]*)/, "$1\n| `BENCH_WARMUP_CALLS` | 5000 | a positive whole number | |")
    const found = Object.entries(BENCH_PROGRAM_SETTINGS).flatMap(([program, schema]) => mismatches(tablesOf(edited), program, schema))
    expect(found).toEqual([
      "bench/timeline.ts: BENCH_TIMELINE_STREAM is read but not in the table",
      'bench/sdk.ts: BENCH_RUNS default is "200", the table says "100"',
      "bench/egressPolicy.ts: BENCH_WARMUP_CALLS is in the table but not read"
    ])
  })
})
