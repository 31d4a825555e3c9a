/**
 * This browser's two keys, created on first use and kept in IndexedDB as non-extractable CryptoKeys: script on the
 * page can use them but nobody can read their bytes out. The attester key signs each call's attestation (the gateway
 * checks it against the exact body); the sealing key encrypts stored conversations and their alias maps.
 */
import { getOrAdd, STORES } from "./idb.ts"

export const deviceKeyPair = (): Promise<CryptoKeyPair> =>
  getOrAdd(STORES.keys, "device-attester", () =>
    crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]) as Promise<CryptoKeyPair>)

export const sealingKey = (): Promise<CryptoKey> =>
  getOrAdd(STORES.keys, "sealing", () => crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]))
