/** A random secret of `bytes` bytes as base64url (no padding): verification links, session and CSRF tokens. */
export const base64UrlRandom = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url")
