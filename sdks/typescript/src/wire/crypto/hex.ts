// Lowercase hex encoding of bytes. Hashes in receipts and attestations are bare lowercase hex.

const HEX_DIGITS = "0123456789abcdef"

export const bytesToHex = (bytes: Uint8Array): string => {
  let out = ""
  for (const byte of bytes) out += HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 0x0f]!
  return out
}

/** Decodes hex (either case). Throws on odd length or a non-hex character. */
export const hexToBytes = (hex: string): Uint8Array => {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new TypeError("invalid hex string")
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

/** True for exactly 64 lowercase hex characters: the form of every SHA-256 we publish. */
export const isSha256Hex = (value: unknown): value is string =>
  typeof value === "string" && /^[0-9a-f]{64}$/.test(value)
