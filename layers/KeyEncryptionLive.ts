import { Effect, Layer } from "effect"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../services/AppConfig.ts"
import { KeyEncryption } from "../services/KeyEncryption.ts"
import { generateKekBytes, importKek, KEK_BYTES, openSecret, sealSecret } from "../src/crypto/aead.ts"
import { base64Decode, base64UrlDecode } from "../sdks/typescript/src/wire/crypto/base64.ts"
import { bytesToHex, hexToBytes } from "../sdks/typescript/src/wire/crypto/hex.ts"

/**
 * The 32 KEK bytes from a file's contents: 64 hex characters, base64 / base64url of 32 bytes (surrounding
 * whitespace ignored), or exactly 32 raw bytes.
 */
export const parseKekFile = (contents: Uint8Array): Uint8Array => {
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
  throw new Error(`KEK_FILE must hold ${KEK_BYTES} bytes: 64 hex characters, base64 of 32 bytes, or 32 raw bytes`)
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

export const KeyEncryptionLive = Layer.effect(
  KeyEncryption,
  Effect.gen(function*() {
    const { bytes, source } = yield* loadKekBytes.pipe(Effect.orDie)
    const kek = yield* Effect.promise(() => importKek(bytes))
    bytes.fill(0)
    if (source === "memory") {
      yield* Effect.logWarning("no KEK_FILE and no DATA_DIR: encrypted secrets use a per-process key and cannot be read after a restart")
    }
    return KeyEncryption.of({
      seal: (plaintext, context) => Effect.promise(() => sealSecret(kek, plaintext, context)),
      open: (envelope, context) => Effect.promise(() => openSecret(kek, envelope, context))
    })
  })
)
