import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { documentedErrors, NOT_YET_CATALOGUED } from "../support/errorCatalogue.ts"

const ROOT = join(import.meta.dirname, "../..")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/**
 * Every `code: "..."` the gateway's code can answer with. Client-side code (sdks/typescript/src/proxy: the local
 * proxy's own refusals, listed in docs/errors.md's proxy section) and the CLI are not gateway answers.
 */
const CLIENT_SIDE = ["sdks/typescript/src/proxy"]

const codesInSource = () => {
  const codes = new Map<string, string>()
  // The wire-format code lives in the SDK (one copy) and the gateway answers with its codes too.
  const files = [...sourceFiles("layers"), ...sourceFiles("services"), ...sourceFiles("src"), ...sourceFiles("sdks/typescript/src/wire")].filter((f) => !CLIENT_SIDE.some((dir) => f.startsWith(dir)))
  for (const file of files) {
    for (const m of readFileSync(join(ROOT, file), "utf8").matchAll(/\bcode: "([a-z_]+)"/g)) codes.set(m[1]!, file)
  }
  return codes
}

describe("error codes", () => {
  it("every code the gateway answers with is in docs/errors.md (the catalogue the error table test provokes)", () => {
    const documented = documentedErrors()
    const missing = [...codesInSource()].filter(([code]) => !documented.has(code) && !NOT_YET_CATALOGUED.includes(code))
    expect(missing.map(([code, file]) => `${code} (${file})`)).toEqual([])
  })

  it("the not-yet-catalogued list holds only codes that exist and are still missing from docs/errors.md", () => {
    const documented = documentedErrors()
    const inSource = codesInSource()
    for (const code of NOT_YET_CATALOGUED) {
      expect(inSource.has(code), `${code} no longer exists: drop it from the list`).toBe(true)
      expect(documented.has(code), `${code} is now in docs/errors.md: drop it from the list`).toBe(false)
    }
  })
})
