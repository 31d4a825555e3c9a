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

  it("with KEK_PREVIOUS_FILE, opens what either key sealed and seals under KEK_FILE's only", async () => {
    const oldFile = join(dir, "kek-old")
    writeFileSync(oldFile, "33".repeat(32))
    const newFile = join(dir, "kek-new")
    writeFileSync(newFile, Buffer.alloc(32, 0x44).toString("base64") + "\n")
    const underOld = await withKeys({ KEK_FILE: oldFile, DATA_DIR: ":memory:" }, (keys) => keys.seal("sk-old", "ctx"))
    const rotating = { KEK_FILE: newFile, KEK_PREVIOUS_FILE: ` ${oldFile} `, DATA_DIR: ":memory:" }
    const result = await withKeys(rotating, (keys) =>
      Effect.gen(function*() {
        const underNew = yield* keys.seal("sk-new", "ctx")
        return {
          ids: keys.kekIds,
          old: yield* keys.openTagged(underOld, "ctx"),
          fresh: yield* keys.openTagged(underNew, "ctx"),
          opened: yield* keys.open(underOld, "ctx"),
          underNew
        }
      }).pipe(Effect.orDie))
    expect(result.ids.previous).toMatch(/^[A-Za-z0-9_-]{8}$/)
    expect(result.ids.current).not.toBe(result.ids.previous)
    expect(result.old).toEqual({ plaintext: "sk-old", underCurrent: false })
    expect(result.fresh).toEqual({ plaintext: "sk-new", underCurrent: true })
    expect(result.opened).toBe("sk-old")
    // Sealed under the new key: the old key alone cannot open it; the new key alone can.
    await expect(withKeys({ KEK_FILE: oldFile, DATA_DIR: ":memory:" }, (keys) => keys.open(result.underNew, "ctx"))).rejects.toThrow()
    expect(await withKeys({ KEK_FILE: newFile, DATA_DIR: ":memory:" }, (keys) => keys.open(result.underNew, "ctx"))).toBe("sk-new")
    // Without KEK_PREVIOUS_FILE there is no previous key; a value it sealed is a typed failure for openTagged.
    const alone = await withKeys({ KEK_FILE: newFile, DATA_DIR: ":memory:" }, (keys) =>
      Effect.map(Effect.orDie(Effect.flip(keys.openTagged(underOld, "ctx"))), (error) => ({ ids: keys.kekIds, error })))
    expect(alone.ids).toEqual({ current: result.ids.current, previous: undefined })
    expect(alone.error._tag).toBe("AeadOpenError")
  })

  it("refuses to start when KEK_PREVIOUS_FILE holds KEK_FILE's key, or not a key", async () => {
    const file = join(dir, "kek-same")
    writeFileSync(file, "55".repeat(32))
    const copy = join(dir, "kek-same-copy")
    writeFileSync(copy, Buffer.alloc(32, 0x55))
    await expect(withKeys({ KEK_FILE: file, KEK_PREVIOUS_FILE: copy, DATA_DIR: ":memory:" }, (keys) => keys.seal("x", "ctx"))).rejects.toThrow(
      /KEK_PREVIOUS_FILE holds the same key as KEK_FILE/
    )
    const bad = join(dir, "kek-bad")
    writeFileSync(bad, "not a key")
    await expect(withKeys({ KEK_FILE: file, KEK_PREVIOUS_FILE: bad, DATA_DIR: ":memory:" }, (keys) => keys.seal("x", "ctx"))).rejects.toThrow(
      /KEK_PREVIOUS_FILE must hold 32 bytes/
    )
  })
})
