import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

const root = new URL("../../", import.meta.url)

describe("programs/build-name-model.ts", () => {
  it("sdks/vectors/name-model.json is exactly what the generator writes (no hand edits, no stale data)", () => {
    const run = spawnSync(process.execPath, ["programs/build-name-model.ts", "--check"], { cwd: root, encoding: "utf8" })
    expect(run.stderr).toBe("")
    expect(run.stdout).toContain("up to date")
    expect(run.status).toBe(0)
  })

  it("the file holds every section the engines read, with cue words for each language of the corpus", () => {
    const model = JSON.parse(readFileSync(new URL("sdks/vectors/name-model.json", root), "utf8")) as {
      version: number
      lexicon: Record<string, Record<string, unknown>>
      cues: Record<string, unknown>
    }
    expect(model.version).toBe(1)
    expect(Object.keys(model.lexicon).sort()).toEqual(["compromise", "dictionary", "faker", "frequent"])
    for (const key of ["titles", "greetings", "sign_offs", "introducers", "possessive_links", "stop_words", "name_labels"]) {
      expect(Object.keys(model.cues[key] as object), key).toEqual(expect.arrayContaining(["en", "fr", "de", "es", "nl"]))
    }
  })
})
