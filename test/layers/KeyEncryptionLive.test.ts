import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { KeyEncryptionLive, parseKekFile } from "../../layers/KeyEncryptionLive.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"

const dir = mkdtempSync(join(tmpdir(), "kek-test-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const withKeys = <A>(env: Record<string, string>, use: (keys: KeyEncryption["Service"]) => Effect.Effect<A>) =>
  Effect.runPromise(
    Effect.flatMap(Effect.service(KeyEncryption), use).pipe(
      Effect.provide(KeyEncryptionLive.pipe(Layer.provide(AppConfig.fromEnv({ LOG_LEVEL: "error", ...env }))))
    )
  )

describe("KeyEncryptionLive (the KEK)", () => {
  it("reads KEK_FILE as hex, base64 or raw bytes, and rejects anything else", () => {
    const bytes = new Uint8Array(32).map((_, i) => i)
    const hex = Buffer.from(bytes).toString("hex")
    expect(parseKekFile(new TextEncoder().encode(hex + "\n"))).toEqual(bytes)
    expect(parseKekFile(new TextEncoder().encode(Buffer.from(bytes).toString("base64")))).toEqual(bytes)
    expect(parseKekFile(bytes)).toEqual(bytes)
    expect(() => parseKekFile(new TextEncoder().encode("too short"))).toThrow(/KEK_FILE/)
  })

  it("opens with the same KEK_FILE what it sealed, and a different KEK cannot open it", async () => {
    const kekFile = join(dir, "kek-a")
    writeFileSync(kekFile, "11".repeat(32))
    const otherFile = join(dir, "kek-b")
    writeFileSync(otherFile, "22".repeat(32))
    const sealed = await withKeys({ KEK_FILE: kekFile, DATA_DIR: ":memory:" }, (keys) => keys.seal("whsec_x", "ctx"))
    expect(await withKeys({ KEK_FILE: kekFile, DATA_DIR: ":memory:" }, (keys) => keys.open(sealed, "ctx"))).toBe("whsec_x")
    await expect(withKeys({ KEK_FILE: otherFile, DATA_DIR: ":memory:" }, (keys) => keys.open(sealed, "ctx"))).rejects.toThrow()
  })

  it("without KEK_FILE, generates DATA_DIR/kek (mode 0600) once and reuses it after a restart", async () => {
    const dataDir = join(dir, "data")
    const sealed = await withKeys({ DATA_DIR: dataDir }, (keys) => keys.seal("whsec_y", "ctx"))
    const file = join(dataDir, "kek")
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const first = readFileSync(file, "utf8")
    expect(await withKeys({ DATA_DIR: dataDir }, (keys) => keys.open(sealed, "ctx"))).toBe("whsec_y")
    expect(readFileSync(file, "utf8")).toBe(first)
  })
})
