// HMAC-SHA256 and constant-time comparison on WebCrypto, shared by the sender and the receiver helper.
// Portable (globalThis.crypto.subtle, TextEncoder): runs in Node, Deno and browsers.

const utf8 = new TextEncoder()

/** Lowercase hex HMAC-SHA256 of `message`, keyed with the UTF-8 bytes of `secret` (docs/webhooks.md). */
export const hmacSha256Hex = async (secret: string, message: string): Promise<string> => {
  const key = await globalThis.crypto.subtle.importKey(
    "raw",
    utf8.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"]
  )
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, utf8.encode(message)))
  let hex = ""
  for (const byte of mac) hex += byte.toString(16).padStart(2, "0")
  return hex
}

/**
 * Equality of two strings whose running time depends only on their lengths, never on where they
 * first differ, so an attacker cannot discover a valid signature byte by byte from response times.
 * The length of a hex HMAC is public, so returning early on a length mismatch leaks nothing.
 */
export const constantTimeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
