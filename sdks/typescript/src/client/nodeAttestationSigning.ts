/**
 * The attestation's hash and signature on node:crypto (Node-only; the local proxy's engine). WebCrypto's versions
 * (the portable default in wire/attestation/v3.ts) are asynchronous: each is a thread-pool job and a promise, which
 * on a short request costs more than the work itself (issue 24: about a third of the proxy's CPU per "Say hello."
 * call). These run on the calling thread in microseconds and give the same results: the same JCS SHA-256 hex (the
 * canonical bytes come from the shared wire/crypto/jcs.ts), and an ES256 signature by the same device key, raw r||s
 * as WebCrypto gives it, so the gateway's check is unchanged. The signature is asked for in DER with the KeyObject
 * passed bare and converted to r||s here: node's `{ key, dsaEncoding: "ieee-p1363" }` option object doubled the cost
 * of the signature (issue 24: 34-36 -> 17-18 us per sign, micro-bench; see ecdsaSignatureDer.ts).
 */
import { createHash, KeyObject, sign } from "node:crypto"
import type { AttestationSigning } from "../wire/attestation/v3.ts"
import { p256DerToRaw } from "../wire/crypto/ecdsaSignatureDer.ts"
import { canonicalBytes, parseJsonBytes } from "../wire/crypto/jcs.ts"

/** node:crypto's handle on each device key, made once (the WebCrypto key stays the one that is stored). */
const keyObjects = new WeakMap<CryptoKey, KeyObject>()

const keyObjectOf = (privateKey: CryptoKey): KeyObject => {
  let key = keyObjects.get(privateKey)
  if (key === undefined) {
    key = KeyObject.from(privateKey)
    keyObjects.set(privateKey, key)
  }
  return key
}

export const nodeAttestationSigning: AttestationSigning = {
  jsonBodySha256Hex: (bodyBytes) => createHash("sha256").update(canonicalBytes(parseJsonBytes(bodyBytes))).digest("hex"),
  sha256Hex: (bytes) => createHash("sha256").update(bytes).digest("hex"),
  signEs256: (privateKey, bytes) => p256DerToRaw(sign("sha256", bytes, keyObjectOf(privateKey)))
}
