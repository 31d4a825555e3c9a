/**
 * The device's stable-alias secret: 32 random bytes under which stable aliases are derived
 * (HMAC-SHA256 of the value; docs/tokeniser.md, "Stable aliases"). Node-only. It lives next to the device
 * attester key, `<client config dir>/alias-secret` (base64url text, mode 0600, directory 0700), is generated on
 * first use, and never leaves the device: it is not sent, not logged, and not part of any request or attestation.
 * Whoever holds the file can recompute which alias stands for a guessed value, so it is guarded like the device key;
 * deleting it starts a new alias space (existing embeddings then no longer match new ones).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { base64UrlDecode, base64UrlEncode } from "../wire/crypto/base64.ts"
import { clientConfigDir } from "./deviceKey.ts"
import { ProxyStartError } from "./ProxyStartError.ts"
import { assertPrivateFile } from "./secretFile.ts"

export const ALIAS_SECRET_FILE_NAME = "alias-secret"
const SECRET_BYTES = 32

export const aliasSecretPath = (env: Readonly<Record<string, string | undefined>>): string =>
  join(clientConfigDir(env), ALIAS_SECRET_FILE_NAME)

const readSecretFile = (path: string): Uint8Array => {
  assertPrivateFile(path, "Stable-alias secret file", "PRIVACY_RELAY_CONFIG_DIR / XDG_CONFIG_HOME")
  let secret: Uint8Array | undefined
  try {
    secret = base64UrlDecode(readFileSync(path, "utf8").trim())
  } catch {
    secret = undefined
  }
  if (secret === undefined || secret.length < SECRET_BYTES) {
    throw new ProxyStartError(
      `Stable-alias secret file ${path} does not hold ${SECRET_BYTES} base64url bytes; move it away to generate a new one ` +
        "(stable aliases then change, so embeddings made before no longer match new ones)."
    )
  }
  return secret
}

/** Loads the secret, generating and storing it (0600) the first time. */
export const loadOrCreateAliasSecret = (env: Readonly<Record<string, string | undefined>>): Uint8Array => {
  const dir = clientConfigDir(env)
  const path = join(dir, ALIAS_SECRET_FILE_NAME)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  try {
    // "wx": create only if absent, so two processes starting at once agree on one secret.
    writeFileSync(path, `${base64UrlEncode(globalThis.crypto.getRandomValues(new Uint8Array(SECRET_BYTES)))}\n`, { flag: "wx", mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new ProxyStartError(`Cannot create the stable-alias secret file ${path}: ${(error as Error).message}`)
    }
  }
  return readSecretFile(path)
}
