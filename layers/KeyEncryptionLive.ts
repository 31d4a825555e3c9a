import { Effect, Layer } from "effect"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../services/AppConfig.ts"
import { KeyEncryption } from "../services/KeyEncryption.ts"
import { AeadOpenError, generateKekBytes, importKek, KEK_BYTES, openSecretWith, sealSecret } from "../src/crypto/aead.ts"
import { base64Decode, base64UrlDecode } from "../sdks/typescript/src/wire/crypto/base64.ts"
import { bytesToHex, hexToBytes } from "../sdks/typescript/src/wire/crypto/hex.ts"

/**
 * The 32 KEK bytes from a file's contents: 64 hex characters, base64 / base64url of 32 bytes (surrounding
 * whitespace ignored), or exactly 32 raw bytes.
 */
export const parseKekFile = (contents: Uint8Array, setting = "KEK_FILE"): Uint8Array => {
  const text = new TextDecoder().decode(contents).trim()
  if (/^[0-9a-fA-F]{64}$/.test(text)) return hexToBytes(text.toLowerCase())
  for (const decode of [base64Decode, base64UrlDecode]) {
    try {
      const bytes = decode(text)
      if (bytes.length === KEK_BYTES) return bytes
    } catch {
      // not this encoding
    }
  }
  if (contents.length === KEK_BYTES) return contents
  throw new Error(`${setting} must hold ${KEK_BYTES} bytes: 64 hex characters, base64 of 32 bytes, or 32 raw bytes`)
}

/**
 * Where the KEK comes from (docs/webhooks.md, "Secrets at rest"):
 * 1. KEK_FILE, when set (production: a file from the secret store, readable only by the gateway).
 * 2. Else DATA_DIR/kek, created on first start with a random key (mode 0600) and reused afterwards, so embedded
 *    single-node set-ups keep working across restarts without configuration.
 * 3. Else (DATA_DIR=:memory:, tests) a random key held in memory for the life of the process.
 */
const loadKekBytes = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.kekFile !== undefined) {
    return { bytes: parseKekFile(readFileSync(config.kekFile)), source: "KEK_FILE" }
  }
  if (config.dataDir !== undefined) {
    const file = join(config.dataDir, "kek")
    if (existsSync(file)) return { bytes: parseKekFile(readFileSync(file)), source: "DATA_DIR/kek" }
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
    const bytes = generateKekBytes()
    writeFileSync(file, bytesToHex(bytes) + "\n", { mode: 0o600, flag: "wx" })
    chmodSync(file, 0o600)
    return { bytes, source: "DATA_DIR/kek (generated)" }
  }
  return { bytes: generateKekBytes(), source: "memory" }
})

/** KEK_PREVIOUS_FILE's key, when set (a KEK rotation is under way); it has no default. */
const loadPreviousKekBytes = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.kekPreviousFile === undefined) return undefined
  return parseKekFile(readFileSync(config.kekPreviousFile), "KEK_PREVIOUS_FILE")
})

export const KeyEncryptionLive = Layer.effect(
  KeyEncryption,
  Effect.gen(function*() {
    const { bytes, source } = yield* loadKekBytes.pipe(Effect.orDie)
    const current = yield* Effect.promise(() => importKek(bytes))
    bytes.fill(0)
    if (source === "memory") {
      yield* Effect.logWarning("no KEK_FILE and no DATA_DIR: encrypted secrets use a per-process key and cannot be read after a restart")
    }
    const previousBytes = yield* loadPreviousKekBytes.pipe(Effect.orDie)
    const previous = previousBytes === undefined ? undefined : yield* Effect.promise(() => importKek(previousBytes))
    previousBytes?.fill(0)
    if (previous !== undefined && previous.id === current.id) {
      return yield* Effect.die(new Error(`KEK_PREVIOUS_FILE holds the same key as ${source} (KEK ${current.id}): unset it, or give the key being replaced`))
    }
    if (previous !== undefined) {
      yield* Effect.logInfo("KEK rotation: values sealed under the previous KEK are read, new ones are sealed under the current KEK").pipe(
        Effect.annotateLogs({ kek: current.id, previous_kek: previous.id })
      )
    }
    // The current key first: once `kek rotate` has run, every value opens on the first try.
    const keks = previous === undefined ? [current] : [current, previous]
    const openTagged = (envelope: string, context: string) =>
      Effect.tryPromise({
        try: () => openSecretWith(keks, envelope, context),
        catch: (e) => (e instanceof AeadOpenError ? e : new AeadOpenError(String(e)))
      }).pipe(Effect.map((opened) => ({ plaintext: opened.plaintext, underCurrent: opened.kek === current })))
    return KeyEncryption.of({
      seal: (plaintext, context) => Effect.promise(() => sealSecret(current, plaintext, context)),
      open: (envelope, context) => Effect.map(Effect.orDie(openTagged(envelope, context)), (opened) => opened.plaintext),
      openTagged,
      kekIds: { current: current.id, previous: previous?.id }
    })
  })
)
