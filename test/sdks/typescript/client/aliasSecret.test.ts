import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { aliasSecretPath, loadOrCreateAliasSecret } from "../../../../sdks/typescript/src/client/aliasSecret.ts"
import { deviceKeyPath } from "../../../../sdks/typescript/src/client/deviceKey.ts"

const dir = mkdtempSync(join(tmpdir(), "alias-secret-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("loadOrCreateAliasSecret", () => {
  it("creates 32 random bytes next to the device key (0600, directory 0700) and reads the same ones afterwards", () => {
    const env = { PRIVACY_RELAY_CONFIG_DIR: join(dir, "a") }
    const first = loadOrCreateAliasSecret(env)
    expect(first).toHaveLength(32)
    const path = aliasSecretPath(env)
    expect(join(path, "..")).toBe(join(deviceKeyPath(env), ".."))
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, "a")).mode & 0o777).toBe(0o700)
    expect(loadOrCreateAliasSecret(env)).toEqual(first)
    // Another device (config directory) gets another secret.
    expect(loadOrCreateAliasSecret({ PRIVACY_RELAY_CONFIG_DIR: join(dir, "b") })).not.toEqual(first)
  })

  it("refuses a group-readable or malformed file without printing its content", () => {
    const env = { PRIVACY_RELAY_CONFIG_DIR: join(dir, "c") }
    loadOrCreateAliasSecret(env)
    const path = aliasSecretPath(env)
    const content = readFileSync(path, "utf8").trim()
    chmodSync(path, 0o640)
    expect(() => loadOrCreateAliasSecret(env)).toThrow(`chmod 600 ${path}`)
    try {
      loadOrCreateAliasSecret(env)
    } catch (error) {
      expect((error as Error).message).not.toContain(content)
    }
    writeFileSync(path, "short\n", { mode: 0o600 })
    chmodSync(path, 0o600)
    expect(() => loadOrCreateAliasSecret(env)).toThrow(/does not hold 32 base64url bytes; move it away/)
  })
})
