/**
 * The device attester key: the P-256 key pair that signs this device's v3 attestations. Node-only.
 * Generated on first use and stored as a private JWK in the user's config directory:
 * `$PRIVACY_RELAY_CONFIG_DIR/attester-key.json`, else `$XDG_CONFIG_HOME/privacy-relay/attester-key.json`,
 * else `~/.config/privacy-relay/attester-key.json`. The file is created with mode 0600 (directory 0700)
 * and a group/world-readable key file is refused, like the gateway key file.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import {
  exportPrivateJwk,
  generateSigningKeyPair,
  importPrivateJwk,
  importPublicJwk,
  isPublicJwk,
  type PrivateJwk
} from "../wire/crypto/ecdsa.ts"
import { expandHomePath } from "./homePath.ts"
import { ProxyStartError } from "./ProxyStartError.ts"
import { assertPrivateFile } from "./secretFile.ts"

export const DEVICE_KEY_FILE_NAME = "attester-key.json"

/** The config directory of this client on this machine. */
export const clientConfigDir = (env: Readonly<Record<string, string | undefined>>): string => {
  if (env.PRIVACY_RELAY_CONFIG_DIR) return expandHomePath(env.PRIVACY_RELAY_CONFIG_DIR, "PRIVACY_RELAY_CONFIG_DIR", env)
  const base = env.XDG_CONFIG_HOME ? expandHomePath(env.XDG_CONFIG_HOME, "XDG_CONFIG_HOME", env) : join(env.HOME || homedir(), ".config")
  return join(base, "privacy-relay")
}

export const deviceKeyPath = (env: Readonly<Record<string, string | undefined>>): string =>
  join(clientConfigDir(env), DEVICE_KEY_FILE_NAME)

const isPrivateJwk = (value: unknown): value is PrivateJwk =>
  isPublicJwk(value) && typeof (value as unknown as Record<string, unknown>).d === "string"

const importPair = async (jwk: PrivateJwk): Promise<CryptoKeyPair> => ({
  // Not extractable: once loaded, the private key cannot be exported from this process.
  privateKey: await importPrivateJwk(jwk),
  publicKey: await importPublicJwk(jwk)
})

const readKeyFile = async (path: string): Promise<CryptoKeyPair> => {
  assertPrivateFile(path, "Device attester key file", "PRIVACY_RELAY_CONFIG_DIR / XDG_CONFIG_HOME")
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"))
  } catch {
    throw new ProxyStartError(`Device attester key file ${path} is not JSON; move it away to generate a new key.`)
  }
  if (!isPrivateJwk(parsed)) {
    throw new ProxyStartError(`Device attester key file ${path} is not a P-256 private JWK; move it away to generate a new key.`)
  }
  try {
    return await importPair(parsed)
  } catch {
    throw new ProxyStartError(`Device attester key file ${path} holds an unusable key; move it away to generate a new key.`)
  }
}

/** Loads the device key pair, generating and storing it (0600) the first time. */
export const loadOrCreateDeviceKey = async (env: Readonly<Record<string, string | undefined>>): Promise<CryptoKeyPair> => {
  const dir = clientConfigDir(env)
  const path = join(dir, DEVICE_KEY_FILE_NAME)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const generated = await generateSigningKeyPair({ extractable: true })
  const jwk = await exportPrivateJwk(generated.privateKey)
  try {
    // "wx": create only if absent, so two processes starting at once never overwrite each other's key.
    writeFileSync(path, `${JSON.stringify(jwk)}\n`, { flag: "wx", mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new ProxyStartError(`Cannot create the device attester key file ${path}: ${(error as Error).message}`)
    }
  }
  return readKeyFile(path)
}
