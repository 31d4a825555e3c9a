import { describe, expect, it } from "vitest"
import { compareSemVer, parseSemVer } from "../../../../../sdks/typescript/src/wire/attestation/semver.ts"

const cmp = (a: string, b: string) => compareSemVer(parseSemVer(a)!, parseSemVer(b)!)

describe("semver", () => {
  it("parses strict versions and rejects loose ones", () => {
    expect(parseSemVer("1.2.3-rc.1+build.5")).toEqual({ major: 1, minor: 2, patch: 3, prerelease: ["rc", "1"] })
    for (const bad of ["v1.2.3", "1.2", "01.2.3", "1.2.3-", "1.2.3-01", "", "1.2.3 "]) {
      expect(parseSemVer(bad)).toBeUndefined()
    }
  })

  it("orders by numeric core, not by string", () => {
    expect(cmp("0.10.0", "0.9.0")).toBe(1)
    expect(cmp("0.1.0", "0.1.0")).toBe(0)
    expect(cmp("1.0.0", "2.0.0")).toBe(-1)
  })

  it("follows the semver.org 11.4 precedence example", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0"
    ]
    for (let i = 0; i + 1 < ordered.length; i++) {
      expect(cmp(ordered[i]!, ordered[i + 1]!)).toBe(-1)
      expect(cmp(ordered[i + 1]!, ordered[i]!)).toBe(1)
    }
  })

  it("ignores build metadata for precedence", () => {
    expect(cmp("1.0.0+a", "1.0.0+b")).toBe(0)
  })
})
