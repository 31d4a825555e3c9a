// Synchronous SHA-256 on node:crypto for the gateway's hot path. sdks/typescript/src/wire/crypto/jcs.ts has the portable WebCrypto
// versions (async only, so every call is a thread-pool job and a promise); these produce the same hex for the
// same input, in a few microseconds on the calling thread. The JCS canonicalisation itself stays the shared
// sdks/typescript/src/wire/crypto/jcs.ts code, so the bytes hashed here cannot drift from the bytes the portable code hashes.
import { hash } from "node:crypto"
import { canonicalString, parseJsonBytes } from "../../sdks/typescript/src/wire/crypto/jcs.ts"

/**
 * SHA-256 as bare lowercase hex. A string argument is hashed as its UTF-8 bytes (as sdks/typescript/src/wire/crypto/jcs.ts sha256Hex).
 * node:crypto's one-shot `hash`: no Hash object per digest (half the time for the short inputs of a relayed call, which
 * hashes six or seven: the key, the body, the answer, both receipts, the attestation; and no native object left for
 * the garbage collector; issue 41).
 */
export const sha256HexSync = (input: Uint8Array | string): string => hash("sha256", input, "hex")

/**
 * SHA-256 hex of the JCS bytes of a value; equals sdks/typescript/src/wire/crypto/jcs.ts jcsSha256Hex. Throws as canonicalString does.
 * The JCS text is hashed as its UTF-8 bytes, as canonicalBytes encodes them, without a copy of its own.
 */
export const jcsSha256HexSync = (value: unknown): string => sha256HexSync(canonicalString(value))

/**
 * SHA-256 hex of the JCS form of a JSON body given as bytes; equals sdks/typescript/src/wire/crypto/jcs.ts jsonBodySha256Hex.
 * Throws when the bytes are not a UTF-8 JSON document.
 */
export const jsonBodySha256HexSync = (bodyBytes: Uint8Array): string => jcsSha256HexSync(parseJsonBytes(bodyBytes))

/** Request body buffer -> what was worked out from it. Weak keys: an entry goes with its request. */
const requestBodies = new WeakMap<ArrayBufferLike, { json?: { readonly value: unknown }; hash?: string }>()

/** Only a view of a whole buffer is remembered (a view into a shared pool could be another body). */
const entryOf = (bodyBytes: Uint8Array) => {
  if (bodyBytes.byteOffset !== 0 || bodyBytes.byteLength !== bodyBytes.buffer.byteLength) return undefined
  let entry = requestBodies.get(bodyBytes.buffer)
  if (entry === undefined) {
    entry = {}
    requestBodies.set(bodyBytes.buffer, entry)
  }
  return entry
}

/**
 * An HTTP request body parsed as JSON (strict UTF-8), ONCE per request: the attestation's JCS hash, the idempotency
 * key's body identity and the relay's shape checks all read the same value, which none of them modifies. The server
 * hands every reader of a request the same buffer, and request bodies are never written to after they are read.
 * Throws as parseJsonBytes does (every time it is asked).
 */
export const requestBodyJson = (bodyBytes: Uint8Array): unknown => {
  const entry = entryOf(bodyBytes)
  if (entry?.json !== undefined) return entry.json.value
  const value = parseJsonBytes(bodyBytes)
  if (entry !== undefined) entry.json = { value }
  return value
}

/**
 * jsonBodySha256HexSync for an HTTP request body, computed once per request: a relay call with an Idempotency-Key
 * needs it twice (the key's body identity and the attestation's egress_sha256 check), so the second caller gets the
 * first one's answer instead of canonicalising a possibly large body again (from the body parsed once).
 */
export const requestBodySha256HexSync = (bodyBytes: Uint8Array): string => {
  const entry = entryOf(bodyBytes)
  if (entry?.hash !== undefined) return entry.hash
  const hex = jcsSha256HexSync(requestBodyJson(bodyBytes))
  if (entry !== undefined) entry.hash = hex
  return hex
}
