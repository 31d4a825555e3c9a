import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { buildAttestation, verifyV3Signature } from "../../../../sdks/typescript/src/wire/attestation/v3.ts"
import { clientConfigDir, deviceKeyPath, loadOrCreateDeviceKey } from "../../../../sdks/typescript/src/client/deviceKey.ts"
import { readGatewayKeyFile } from "../../../../sdks/typescript/src/client/gatewayKeyFile.ts"
import { exportPublicJwk } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"

const dir = mkdtempSync(join(tmpdir(), "client-secrets-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const KEY = `svc_${"a".repeat(52)}`

describe("readGatewayKeyFile", () => {
  it("reads a 0600 key file and trims the newline", () => {
    const path = join(dir, "ok-key")
    writeFileSync(path, `${KEY}\n`, { mode: 0o600 })
    expect(readGatewayKeyFile(path)).toBe(KEY)
  })

  it("refuses group- or world-readable files with the chmod fix and without printing the key", () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const path = join(dir, `loose-${mode.toString(8)}`)
      writeFileSync(path, KEY)
      chmodSync(path, mode)
      let message = ""
      try {
        readGatewayKeyFile(path)
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).toContain(`chmod 600 ${path}`)
      expect(message).not.toContain(KEY)
    }
  })

  it("refuses a missing path, an unset setting and a file that holds no gateway key", () => {
    expect(() => readGatewayKeyFile(join(dir, "absent"))).toThrow(/does not exist \(set by GATEWAY_KEY_FILE\)/)
    expect(() => readGatewayKeyFile(undefined)).toThrow(/GATEWAY_KEY_FILE is not set/)
    const path = join(dir, "not-a-key")
    writeFileSync(path, "sk-provider-key", { mode: 0o600 })
    expect(() => readGatewayKeyFile(path)).toThrow(/does not hold a gateway key/)
  })
})

describe("device attester key", () => {
  it("resolves the config directory: override, then XDG_CONFIG_HOME, then ~/.config", () => {
    expect(clientConfigDir({ PRIVACY_RELAY_CONFIG_DIR: "/x/y", XDG_CONFIG_HOME: "/xdg" })).toBe("/x/y")
    expect(clientConfigDir({ XDG_CONFIG_HOME: "/xdg", HOME: "/home/u" })).toBe("/xdg/privacy-relay")
    expect(clientConfigDir({ HOME: "/home/u" })).toBe("/home/u/.config/privacy-relay")
    expect(deviceKeyPath({ HOME: "/home/u" })).toBe("/home/u/.config/privacy-relay/attester-key.json")
  })

  it("is generated on first use as a 0600 private JWK, then reused", async () => {
    const env = { XDG_CONFIG_HOME: join(dir, "xdg") }
    const first = await loadOrCreateDeviceKey(env)
    const path = deviceKeyPath(env)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(readFileSync(path, "utf8"))
    expect(stored).toMatchObject({ kty: "EC", crv: "P-256" })
    expect(typeof stored.d).toBe("string")
    const second = await loadOrCreateDeviceKey(env)
    expect(await exportPublicJwk(second.publicKey)).toEqual(await exportPublicJwk(first.publicKey))
    // The loaded pair signs attestations that verify against the embedded public key.
    const envelope = await buildAttestation({
      route: "messages",
      bodyBytes: new TextEncoder().encode("{}"),
      detectorsFired: {},
      engine: { id: "relay-ts", version: "0.1.0", sha256: "b".repeat(64) },
      keyPair: second
    })
    expect(await verifyV3Signature(envelope)).toBe(true)
  })

  it("refuses a key file that is readable by others", async () => {
    const env = { PRIVACY_RELAY_CONFIG_DIR: join(dir, "loose-config") }
    await loadOrCreateDeviceKey(env)
    chmodSync(deviceKeyPath(env), 0o644)
    await expect(loadOrCreateDeviceKey(env)).rejects.toThrow(/readable by other users.*chmod 600/)
  })

  it("refuses a corrupt key file instead of silently replacing it", async () => {
    const env = { PRIVACY_RELAY_CONFIG_DIR: join(dir, "corrupt-config") }
    await loadOrCreateDeviceKey(env)
    writeFileSync(deviceKeyPath(env), "{not json", { mode: 0o600 })
    await expect(loadOrCreateDeviceKey(env)).rejects.toThrow(/is not JSON/)
  })
})
