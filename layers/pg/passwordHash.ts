import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/**
 * Password hashing with node:crypto scrypt at OWASP's recommended cost: N = 2^17, r = 8, p = 1 (128 MiB, a few
 * hundred milliseconds on the libuv pool, off the event loop), 16-byte random salt, 32-byte output. The stored
 * form carries its parameters, `scrypt$<log2 N>$<r>$<p>$<salt b64url>$<hash b64url>`, so the cost can be raised
 * later without invalidating existing hashes.
 */
const LOG2_N = 17
const R = 8
const P = 1
const KEY_LENGTH = 32

const derive = (password: string, salt: Buffer, log2N: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { N: 2 ** log2N, r, p, maxmem: 256 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key)))

export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(16)
  const key = await derive(password, salt, LOG2_N, R, P)
  return `scrypt$${LOG2_N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`
}

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const parts = stored.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return false
  const [log2N, r, p] = parts.slice(1, 4).map(Number)
  if (!(log2N >= 10 && log2N <= 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return false
  const expected = Buffer.from(parts[5], "base64url")
  const actual = await derive(password, Buffer.from(parts[4], "base64url"), log2N, r, p)
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** Compared against when the e-mail is unknown, so a failed login takes as long whether or not the account exists. */
export const DUMMY_PASSWORD_HASH = `scrypt$${LOG2_N}$${R}$${P}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`
