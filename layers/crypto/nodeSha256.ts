// Synchronous SHA-256 on node:crypto for the gateway's hot path. sdks/typescript/src/wire/crypto/jcs.ts has the portable WebCrypto
// versions (async only, so every call is a thread-pool job and a promise); these produce the same hex for the
// same input, in a few microseconds on the calling thread. The JCS canonicalisation itself stays the shared
// sdks/typescript/src/wire/crypto/jcs.ts code, so the bytes hashed here cannot drift from the bytes the portable code hashes.
import { createHash } from "node:crypto"
import { canonicalBytes, parseJsonBytes } from "../../sdks/typescript/src/wire/crypto/jcs.ts"

/** SHA-256 as bare lowercase hex. A string argument is hashed as its UTF-8 bytes (as sdks/typescript/src/wire/crypto/jcs.ts sha256Hex). */
export const sha256HexSync = (input: Uint8Array | string): string =>
  createHash("sha256").update(input).digest("hex")

/** SHA-256 hex of the JCS bytes of a value; equals sdks/typescript/src/wire/crypto/jcs.ts jcsSha256Hex. Throws as canonicalBytes does. */
export const jcsSha256HexSync = (value: unknown): string => sha256HexSync(canonicalBytes(value))

/**
 * SHA-256 hex of the JCS form of a JSON body given as bytes; equals sdks/typescript/src/wire/crypto/jcs.ts jsonBodySha256Hex.
 * Throws when the bytes are not a UTF-8 JSON document.
 */
export const jsonBodySha256HexSync = (bodyBytes: Uint8Array): string => jcsSha256HexSync(parseJsonBytes(bodyBytes))

/** Request body buffer -> its hash. Weak keys: an entry goes with its request. */
const requestBodyHashes = new WeakMap<ArrayBufferLike, string>()

/**
 * jsonBodySha256HexSync for an HTTP request body, computed once per request: a relay call with an Idempotency-Key
 * needs it twice (the key's body identity and the attestation's egress_sha256 check), and the server hands every
 * reader of a request the same buffer, so the second caller gets the first one's answer instead of canonicalising
 * a possibly large body again. Only for request bodies, which are never written to after they are read; only a
 * view of a whole buffer is remembered (a view into a shared pool could be another body).
 */
export const requestBodySha256HexSync = (bodyBytes: Uint8Array): string => {
  const whole = bodyBytes.byteOffset === 0 && bodyBytes.byteLength === bodyBytes.buffer.byteLength
  const known = whole ? requestBodyHashes.get(bodyBytes.buffer) : undefined
  if (known !== undefined) return known
  const hex = jsonBodySha256HexSync(bodyBytes)
  if (whole) requestBodyHashes.set(bodyBytes.buffer, hex)
  return hex
}
