// RFC 8785 JSON Canonicalization Scheme (JCS) and the SHA-256 digests built on it.
// Pure WebCrypto + TextEncoder so the same code runs in Node, Deno and browsers.
// There is no synchronous SHA-256 here on purpose: WebCrypto digests are async-only and
// src/crypto must not import node:crypto.
import canonicalize from "canonicalize"
import { bytesToHex } from "./hex.ts"

const utf8Encoder = new TextEncoder()
// fatal: bytes that are not valid UTF-8 are rejected instead of being silently replaced with U+FFFD,
// which would let two different byte strings hash the same.
const strictUtf8Decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * The JCS text of a JSON value (sorted keys by UTF-16 code units, ECMAScript number form, no
 * insignificant whitespace). Throws for values JSON cannot represent (undefined, functions,
 * NaN/Infinity, bigint, lone surrogates, cycles).
 */
export const canonicalString = (value: unknown): string => {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") {
    throw new TypeError("value has no JSON representation")
  }
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError("value has no JSON representation")
  return text
}

/** The UTF-8 bytes of the JCS text: exactly what gets hashed and signed. */
export const canonicalBytes = (value: unknown): Uint8Array => utf8Encoder.encode(canonicalString(value))

/** SHA-256 as bare lowercase hex. A string argument is hashed as its UTF-8 bytes. */
export const sha256Hex = async (input: Uint8Array | string): Promise<string> => {
  const bytes = typeof input === "string" ? utf8Encoder.encode(input) : input
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)
  return bytesToHex(new Uint8Array(digest))
}

/** SHA-256 hex of the JCS bytes of a value. */
export const jcsSha256Hex = (value: unknown): Promise<string> => sha256Hex(canonicalBytes(value))

/**
 * Parses a JSON document given as raw UTF-8 bytes (a request body). Throws on invalid UTF-8 or JSON.
 */
export const parseJsonBytes = (bytes: Uint8Array): unknown => JSON.parse(strictUtf8Decoder.decode(bytes))

/**
 * SHA-256 hex of the JCS form of a JSON body given as bytes: `hash_upstream_request` and the
 * attestation's `egress_sha256`. Key order and whitespace between tokens do not change it;
 * whitespace inside strings does. Throws when the bytes are not a JSON document.
 */
export const jsonBodySha256Hex = async (bodyBytes: Uint8Array): Promise<string> =>
  jcsSha256Hex(parseJsonBytes(bodyBytes))
