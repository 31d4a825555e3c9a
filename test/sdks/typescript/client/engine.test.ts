import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ENGINE, ENGINE_SOURCE_DIRS, engineSourceSha256 } from "../../../../sdks/typescript/src/client/engine.ts"

const repoRoot = join(import.meta.dirname, "../../../..")
const copy = mkdtempSync(join(tmpdir(), "engine-src-"))
afterAll(() => rmSync(copy, { recursive: true, force: true }))

describe("engine identity", () => {
  it("is relay-ts at the package version with the fingerprint of the running sources", () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"))
    expect(ENGINE.id).toBe("relay-ts")
    expect(ENGINE.version).toBe(pkg.version)
    expect(ENGINE.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(ENGINE.sha256).toBe(engineSourceSha256(repoRoot))
  })

  it("the fingerprint depends on the engine sources and on nothing else", () => {
    for (const dir of ENGINE_SOURCE_DIRS) cpSync(join(repoRoot, dir), join(copy, dir), { recursive: true })
    expect(engineSourceSha256(copy)).toBe(ENGINE.sha256)
    mkdirSync(join(copy, "src"), { recursive: true })
    writeFileSync(join(copy, "src", "unrelated.ts"), "export const x = 1\n")
    expect(engineSourceSha256(copy)).toBe(ENGINE.sha256)
    writeFileSync(join(copy, "sdks", "typescript", "src", "unrelated.ts"), "export const x = 1\n")
    expect(engineSourceSha256(copy)).toBe(ENGINE.sha256)
    appendFileSync(join(copy, "sdks/typescript/src/tokeniser/index.ts"), "\n// changed\n")
    expect(engineSourceSha256(copy)).not.toBe(ENGINE.sha256)
  })

  it("covers the tokeniser, the device-side client code and the local proxy, each where it lives", () => {
    const changed = (file: string) => {
      const again = mkdtempSync(join(tmpdir(), "engine-src-"))
      try {
        for (const dir of ENGINE_SOURCE_DIRS) cpSync(join(repoRoot, dir), join(again, dir), { recursive: true })
        appendFileSync(join(again, file), "\n// changed\n")
        return engineSourceSha256(again)
      } finally {
        rmSync(again, { recursive: true, force: true })
      }
    }
    for (const file of ["sdks/typescript/src/tokeniser/detectors/email.ts", "sdks/typescript/src/client/deviceKey.ts", "sdks/typescript/src/proxy/proxyServer.ts"]) {
      expect(changed(file), file).not.toBe(ENGINE.sha256)
    }
  })
})
