// AES-256-GCM envelope encryption of small secrets (webhook signing secrets, BYOK credentials) under
// the gateway's key-encryption key (KEK). Portable: WebCrypto and TextEncoder only.
//
// Envelope text: `aead1.<base64url 12-byte IV>.<base64url ciphertext || 16-byte tag>`. The version
// prefix lets a later format coexist with stored rows. `context` is authenticated additional data:
// a ciphertext copied into another row (another organisation, another purpose) fails to open.
import { base64UrlDecode, base64UrlEncode } from "../../sdks/typescript/src/wire/crypto/base64.ts"

const PREFIX = "aead1"
const IV_BYTES = 12
export const KEK_BYTES = 32

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/** A fresh random 256-bit key-encryption key, as raw bytes (what a KEK file holds). */
export const generateKekBytes = (): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(KEK_BYTES))

/** Imports 32 raw bytes as a non-extractable AES-256-GCM key. */
export const importKek = async (raw: Uint8Array): Promise<CryptoKey> => {
  if (raw.length !== KEK_BYTES) throw new RangeError(`a KEK is exactly ${KEK_BYTES} bytes, got ${raw.length}`)
  return globalThis.crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "AES-GCM" }, false, ["encrypt", "decrypt"])
}

/** Encrypts `plaintext` under `kek`, binding it to `context`. A fresh random IV every call. */
export const sealSecret = async (kek: CryptoKey, plaintext: string, context: string): Promise<string> => {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES))
  const sealed = new Uint8Array(
    await globalThis.crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: utf8.encode(context), tagLength: 128 },
      kek,
      utf8.encode(plaintext)
    )
  )
  return `${PREFIX}.${base64UrlEncode(iv)}.${base64UrlEncode(sealed)}`
}

export class AeadOpenError extends Error {
  readonly _tag = "AeadOpenError"
}

/**
 * Decrypts an envelope made by sealSecret with the same KEK and context. Throws AeadOpenError when the
 * envelope is malformed, was made under another key or context, or was altered.
 */
export const openSecret = async (kek: CryptoKey, envelope: string, context: string): Promise<string> => {
  const parts = envelope.split(".")
  if (parts.length !== 3 || parts[0] !== PREFIX) throw new AeadOpenError("not an aead1 envelope")
  let iv: Uint8Array
  let sealed: Uint8Array
  try {
    iv = base64UrlDecode(parts[1]!)
    sealed = base64UrlDecode(parts[2]!)
  } catch {
    throw new AeadOpenError("envelope is not base64url")
  }
  if (iv.length !== IV_BYTES || sealed.length < 16) throw new AeadOpenError("envelope has the wrong sizes")
  let opened: ArrayBuffer
  try {
    opened = await globalThis.crypto.subtle.decrypt(
      { name: "AES-GCM", iv: iv as Uint8Array<ArrayBuffer>, additionalData: utf8.encode(context), tagLength: 128 },
      kek,
      sealed as Uint8Array<ArrayBuffer>
    )
  } catch {
    throw new AeadOpenError("authentication failed (wrong key, wrong context or altered envelope)")
  }
  return utf8Decoder.decode(opened)
}
