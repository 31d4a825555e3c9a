/**
 * WebCrypto's key types for TypeScript projects without the DOM library (the gateway and the wire format it
 * imports): @types/node declares `CryptoKey` as a global value only, the DOM library as a type too. Not part of the
 * repository's catch-all tsconfig.json, which has the DOM library.
 */
import type { webcrypto } from "node:crypto"

declare global {
  type CryptoKey = webcrypto.CryptoKey
  type CryptoKeyPair = webcrypto.CryptoKeyPair
}
