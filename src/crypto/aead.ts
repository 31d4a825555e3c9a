// AES-256-GCM envelope encryption of small secrets (webhook signing secrets, BYOK credentials) under
// the gateway's key-encryption key (KEK). Portable: WebCrypto and TextEncoder only.
//
// Envelope text, two versions (`context` is authenticated additional data in both: a ciphertext copied into another
// row, another organisation or purpose, fails to open):
// - `aead1.<base64url 12-byte IV>.<base64url ciphertext || 16-byte tag>`: what every release writes today. It does
//   not name its key; during a KEK rotation the key is found by trying the current KEK, then the previous one (GCM's
//   tag tells a wrong key apart with certainty, so a try is an answer, not a guess).
// - `aead2.<KEK id>.<IV>.<ciphertext || tag>`: the same plus the id of the KEK that sealed it (kekId), opened by that
//   key only. Read since KEK rotation was added; not written yet, because a node of the previous release (running
//   beside this one during a rolling update) cannot read it (docs/decisions.md, "KEK rotation").
import { base64UrlDecode, base64UrlEncode } from "../../sdks/typescript/src/wire/crypto/base64.ts"

const V1 = "aead1"
const V2 = "aead2"
const IV_BYTES = 12
export const KEK_BYTES = 32
/** KEK ids are 6 bytes of a hash of the key: 8 base64url characters. */
const KEK_ID_LENGTH = 8

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/** A key-encryption key: the AES-256-GCM key (non-extractable) and its public id. */
export interface Kek {
  /** A fingerprint of the key that reveals nothing of it (kekId): names the key in envelopes, logs and errors. */
  readonly id: string
  readonly key: CryptoKey
}

/** A fresh random 256-bit key-encryption key, as raw bytes (what a KEK file holds). */
export const generateKekBytes = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(KEK_BYTES))

/**
 * The KEK's id: base64url of the first 6 bytes of SHA-256("privacy-relay kek id" || 0x00 || key). Domain-separated
 * from every other use of the key, and one-way: the id can be logged and printed.
 */
export const kekId = async (raw: Uint8Array): Promise<string> => {
  const label = utf8.encode("privacy-relay kek id\0")
  const input = new Uint8Array(label.length + raw.length)
  input.set(label)
  input.set(raw, label.length)
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", input))
  input.fill(0)
  return base64UrlEncode(digest.subarray(0, 6))
}

/** Imports 32 raw bytes as a non-extractable AES-256-GCM key, with its id. */
export const importKek = async (raw: Uint8Array): Promise<Kek> => {
  if (raw.length !== KEK_BYTES) throw new RangeError(`a KEK is exactly ${KEK_BYTES} bytes, got ${raw.length}`)
  const key = await globalThis.crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "AES-GCM" }, false, [
    "encrypt",
    "decrypt"
  ])
  return { id: await kekId(raw), key }
}

/** Encrypts `plaintext` under `kek`, binding it to `context`. A fresh random IV every call; an `aead1` envelope. */
export const sealSecret = async (kek: Kek, plaintext: string, context: string): Promise<string> => {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES))
  const sealed = new Uint8Array(
    await globalThis.crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: utf8.encode(context), tagLength: 128 },
      kek.key,
      utf8.encode(plaintext)
    )
  )
  return `${V1}.${base64UrlEncode(iv)}.${base64UrlEncode(sealed)}`
}

/**
 * The same as sealSecret in the `aead2` form, which names its KEK. Not used by the gateway yet (see the file comment):
 * here so the reader is tested against what the writer will produce.
 */
export const sealSecretWithKekId = async (kek: Kek, plaintext: string, context: string): Promise<string> =>
  `${V2}.${kek.id}.${(await sealSecret(kek, plaintext, context)).slice(V1.length + 1)}`

export class AeadOpenError extends Error {
  readonly _tag = "AeadOpenError"
}

/** The id of the KEK an `aead2` envelope names; undefined for `aead1` (which names none) and for non-envelopes. */
export const envelopeKekId = (envelope: string): string | undefined => {
  const parts = envelope.split(".")
  return parts.length === 4 && parts[0] === V2 ? parts[1] : undefined
}

const decodeSealed = (ivText: string, sealedText: string) => {
  let iv: Uint8Array
  let sealed: Uint8Array
  try {
    iv = base64UrlDecode(ivText)
    sealed = base64UrlDecode(sealedText)
  } catch {
    throw new AeadOpenError("envelope is not base64url")
  }
  if (iv.length !== IV_BYTES || sealed.length < 16) throw new AeadOpenError("envelope has the wrong sizes")
  return { iv, sealed }
}

const decrypt = async (kek: Kek, iv: Uint8Array, sealed: Uint8Array, context: string): Promise<string | undefined> => {
  let opened: ArrayBuffer
  try {
    opened = await globalThis.crypto.subtle.decrypt(
      { name: "AES-GCM", iv: iv as Uint8Array<ArrayBuffer>, additionalData: utf8.encode(context), tagLength: 128 },
      kek.key,
      sealed as Uint8Array<ArrayBuffer>
    )
  } catch {
    return undefined
  }
  return utf8Decoder.decode(opened)
}

/** What opening an envelope gave: the plaintext and the KEK that opened it. */
export interface Opened {
  readonly plaintext: string
  readonly kek: Kek
}

/**
 * Decrypts an envelope made by sealSecret (or sealSecretWithKekId) under one of `keks` and the same context: an
 * `aead2` envelope with the KEK it names, an `aead1` envelope with each KEK in turn. Throws AeadOpenError when the
 * envelope is malformed, was made under none of the keys or another context, or was altered.
 */
export const openSecretWith = async (keks: ReadonlyArray<Kek>, envelope: string, context: string): Promise<Opened> => {
  const parts = envelope.split(".")
  if (parts.length === 4 && parts[0] === V2) {
    const kek = keks.find((k) => k.id === parts[1])
    if (kek === undefined) throw new AeadOpenError(`sealed under KEK ${parts[1]!.slice(0, KEK_ID_LENGTH)}, which this node does not hold`)
    const { iv, sealed } = decodeSealed(parts[2]!, parts[3]!)
    const plaintext = await decrypt(kek, iv, sealed, context)
    if (plaintext === undefined) throw new AeadOpenError("authentication failed (wrong context or altered envelope)")
    return { plaintext, kek }
  }
  if (parts.length !== 3 || parts[0] !== V1) throw new AeadOpenError("not an aead1 or aead2 envelope")
  const { iv, sealed } = decodeSealed(parts[1]!, parts[2]!)
  for (const kek of keks) {
    const plaintext = await decrypt(kek, iv, sealed, context)
    if (plaintext !== undefined) return { plaintext, kek }
  }
  throw new AeadOpenError("authentication failed (wrong key, wrong context or altered envelope)")
}

/** openSecretWith for one KEK, giving the plaintext. */
export const openSecret = async (kek: Kek, envelope: string, context: string): Promise<string> =>
  (await openSecretWith([kek], envelope, context)).plaintext
