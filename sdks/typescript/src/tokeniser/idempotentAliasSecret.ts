/**
 * The per-request alias secret of a call sent with an Idempotency-Key: HMAC-SHA256 of the key under the device-held
 * alias secret. Retrying the call (same key, same body) then tokenises to the very same bytes, so the gateway can
 * match the retry to the first attempt and replay its answer instead of refusing a body that differs only in its
 * alias tags. Another key gives unrelated aliases, so values stay unlinkable between calls; the device secret never
 * leaves the device, and the derived one only ever keys this call's aliases.
 */
const LABEL = "privacy-relay idempotent aliases\u0000"

export const idempotentAliasSecret = async (deviceSecret: Uint8Array, idempotencyKey: string): Promise<Uint8Array> => {
  const key = await globalThis.crypto.subtle.importKey("raw", deviceSecret as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${LABEL}${idempotencyKey}`)))
}
