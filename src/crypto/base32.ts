// Lowercase RFC 4648 base32 without padding. Gateway keys are `svc_` + base32 of 32 random bytes
// (52 characters); lowercase because keys are typed and compared as opaque lowercase strings.

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"

export const base32Encode = (bytes: Uint8Array): string => {
  let out = ""
  let buffer = 0
  let bits = 0
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(buffer >> (bits - 5)) & 31]!
      bits -= 5
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31]!
  return out
}

/**
 * Decodes lowercase unpadded base32. Throws on upper case, padding, foreign characters, impossible
 * lengths and non-zero trailing bits, so each byte string has exactly one accepted spelling.
 */
export const base32Decode = (text: string): Uint8Array => {
  const remainder = text.length % 8
  if (remainder === 1 || remainder === 3 || remainder === 6) throw new TypeError("invalid base32: impossible length")
  const out = new Uint8Array(Math.floor((text.length * 5) / 8))
  let buffer = 0
  let bits = 0
  let o = 0
  for (const char of text) {
    const value = ALPHABET.indexOf(char)
    if (value < 0) throw new TypeError("invalid base32: unexpected character")
    buffer = ((buffer << 5) | value) & 0xffff
    bits += 5
    if (bits >= 8) {
      out[o++] = (buffer >> (bits - 8)) & 0xff
      bits -= 8
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) throw new TypeError("invalid base32: non-zero trailing bits")
  return out
}
