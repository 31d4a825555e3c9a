// Base64 codecs written out by hand (no Buffer, no atob leniency) so they run unchanged in Node,
// Deno and browsers, and so decoding is strict: signatures and headers that are not in canonical
// form are rejected rather than "repaired".

const STANDARD_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const utf8Encoder = new TextEncoder()
const strictUtf8Decoder = new TextDecoder("utf-8", { fatal: true })

const reverseTable = (alphabet: string): Int8Array => {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i
  return table
}
const STANDARD_REVERSE = reverseTable(STANDARD_ALPHABET)
const URL_REVERSE = reverseTable(URL_ALPHABET)

const encodeWith = (bytes: Uint8Array, alphabet: string, pad: boolean): string => {
  let out = ""
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]! + (pad ? "==" : "")
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + (pad ? "=" : "")
  }
  return out
}

const decodeWith = (text: string, reverse: Int8Array, padded: boolean): Uint8Array => {
  let body = text
  if (padded) {
    if (text.length % 4 !== 0) throw new TypeError("invalid base64: length is not a multiple of 4")
    if (text.endsWith("==")) body = text.slice(0, -2)
    else if (text.endsWith("=")) body = text.slice(0, -1)
  }
  if (body.length % 4 === 1) throw new TypeError("invalid base64: impossible length")
  const values = new Uint8Array(body.length)
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i)
    const value = code < 128 ? reverse[code]! : -1
    if (value < 0) throw new TypeError("invalid base64: unexpected character")
    values[i] = value
  }
  const out = new Uint8Array(Math.floor((body.length * 6) / 8))
  let o = 0
  let i = 0
  for (; i + 3 < values.length; i += 4) {
    const n = (values[i]! << 18) | (values[i + 1]! << 12) | (values[i + 2]! << 6) | values[i + 3]!
    out[o++] = n >> 16
    out[o++] = (n >> 8) & 0xff
    out[o++] = n & 0xff
  }
  const rest = values.length - i
  if (rest === 2) {
    if ((values[i + 1]! & 0x0f) !== 0) throw new TypeError("invalid base64: non-zero trailing bits")
    out[o++] = (values[i]! << 2) | (values[i + 1]! >> 4)
  } else if (rest === 3) {
    if ((values[i + 2]! & 0x03) !== 0) throw new TypeError("invalid base64: non-zero trailing bits")
    const n = (values[i]! << 18) | (values[i + 1]! << 12) | (values[i + 2]! << 6)
    out[o++] = n >> 16
    out[o++] = (n >> 8) & 0xff
  }
  return out
}

/**
 * Node's Buffer encoder when the runtime has one that gives exactly these forms (checked once on known bytes): encoding
 * has no leniency to avoid, and the hand-written loop cost ~7 us per attestation header against ~0.6 us (issue 41: the
 * local proxy's CPU per call; the gateway's receipt headers too). Decoding stays the strict loop below.
 */
interface NodeBufferLike {
  from(bytes: ArrayBufferLike, offset: number, length: number): { toString(encoding: "base64" | "base64url"): string }
}
const nodeBuffer = ((): NodeBufferLike | undefined => {
  const candidate = (globalThis as { Buffer?: NodeBufferLike }).Buffer
  if (candidate === undefined || typeof candidate.from !== "function") return undefined
  try {
    const probe = new Uint8Array([0xfb, 0xff, 0xbf, 0x00])
    const ok = candidate.from(probe.buffer, 0, 4).toString("base64") === "+/+/AA==" && candidate.from(probe.buffer, 0, 4).toString("base64url") === "-_-_AA"
    return ok ? candidate : undefined
  } catch {
    return undefined
  }
})()

const encode = (bytes: Uint8Array, alphabet: string, pad: boolean): string =>
  nodeBuffer === undefined
    ? encodeWith(bytes, alphabet, pad)
    : nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(pad ? "base64" : "base64url")

/** base64url without padding (RFC 4648 section 5): signatures, JWK coordinates, key ids. */
export const base64UrlEncode = (bytes: Uint8Array): string => encode(bytes, URL_ALPHABET, false)

/** True when every character of text[0, end) is in the alphabet (a regular expression was slower here). */
const inAlphabet = (text: string, end: number, reverse: Int8Array): boolean => {
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i)
    if (code >= 128 || reverse[code]! < 0) return false
  }
  return true
}

/** Node's Buffer decoder when the runtime has one that reads these forms exactly (checked once on known text). */
interface NodeBufferDecoder {
  from(text: string, encoding: "base64" | "base64url"): Uint8Array
}
const nodeDecoder = ((): NodeBufferDecoder | undefined => {
  const candidate = (globalThis as { Buffer?: NodeBufferDecoder }).Buffer
  if (candidate === undefined || typeof candidate.from !== "function") return undefined
  try {
    const same = (a: Uint8Array, b: ReadonlyArray<number>) => a.length === b.length && b.every((x, i) => a[i] === x)
    const probe = [0xfb, 0xff, 0xbf, 0x00]
    return same(candidate.from("+/+/AA==", "base64"), probe) && same(candidate.from("-_-_AA", "base64url"), probe) ? candidate : undefined
  } catch {
    return undefined
  }
})()

/**
 * Strict decoding, by Node's Buffer where there is one: the text is first checked to be in the canonical form (the
 * alphabet, the padding rule, zero trailing bits), which Buffer alone does not check, and anything else goes to the
 * hand-written loop, which throws the precise error. The loop cost ~10 us per attestation header on the gateway's
 * every relayed call (the check and Buffer ~1 us).
 */
const decode = (text: string, reverse: Int8Array, padded: boolean): Uint8Array => {
  if (nodeDecoder === undefined || (padded && text.length % 4 !== 0)) return decodeWith(text, reverse, padded)
  let end = text.length
  // At most two padding characters, only in the padded form.
  if (padded) while (end > 0 && end > text.length - 2 && text.charCodeAt(end - 1) === 61 /* = */) end--
  if (end % 4 === 1 || !inAlphabet(text, end, reverse)) return decodeWith(text, reverse, padded)
  const last = end % 4 === 0 ? 0 : reverse[text.charCodeAt(end - 1)]!
  if ((end % 4 === 2 && (last & 0x0f) !== 0) || (end % 4 === 3 && (last & 0x03) !== 0)) return decodeWith(text, reverse, padded)
  // A plain Uint8Array of its own, never a view into Buffer's shared pool.
  return new Uint8Array(nodeDecoder.from(text, padded ? "base64" : "base64url"))
}

/** Strict base64url decode: rejects padding, foreign characters and non-canonical trailing bits. */
export const base64UrlDecode = (text: string): Uint8Array => decode(text, URL_REVERSE, false)

/** Standard alphabet, padded (RFC 4648 section 4): the receipt and attestation headers. */
export const base64Encode = (bytes: Uint8Array): string => encode(bytes, STANDARD_ALPHABET, true)

/** Strict standard padded base64 decode. */
export const base64Decode = (text: string): Uint8Array => decode(text, STANDARD_REVERSE, true)

/** Standard padded base64 of a string's UTF-8 bytes. */
export const base64EncodeUtf8 = (text: string): string => base64Encode(utf8Encoder.encode(text))

/** Decodes standard padded base64 and reads the bytes as UTF-8 (invalid UTF-8 throws). */
export const base64DecodeUtf8 = (text: string): string => strictUtf8Decoder.decode(base64Decode(text))
