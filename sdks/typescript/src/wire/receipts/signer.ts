// A receipt signer is a key id plus a signing function, so the private key can live anywhere
// (an in-memory CryptoKey, a KMS, an HSM) without the envelope builders knowing.
import { base64UrlEncode } from "../crypto/base64.ts"
import { signRaw } from "../crypto/ecdsa.ts"
import { canonicalEnvelope, signingInput } from "./signing-input.ts"

export interface Signer {
  /** Key id published in the JWKS (the RFC 7638 thumbprint of the public key). */
  readonly kid: string
  /** ES256 over `bytes`, returning raw r||s (64 bytes). */
  sign(bytes: Uint8Array): Promise<Uint8Array>
}

/** A signer backed by a WebCrypto P-256 private key. */
export const signerFromPrivateKey = (kid: string, privateKey: CryptoKey): Signer => ({
  kid,
  sign: (bytes) => signRaw(privateKey, bytes)
})

/** base64url (no padding) raw r||s signature over the envelope's signing input. */
export const signEnvelope = async (
  unsignedEnvelope: object,
  sign: (bytes: Uint8Array) => Promise<Uint8Array>
): Promise<string> => {
  const signature = await sign(signingInput(unsignedEnvelope))
  if (signature.length !== 64) throw new TypeError("signer must return a raw 64-byte r||s signature")
  return base64UrlEncode(signature)
}

const utf8 = new TextEncoder()

/**
 * signEnvelope that also answers the JCS text of the signed envelope, `signatureMembers` (the names carrying the
 * signature: `sig`, or `signature` and `sig`) included: the bytes the chain's envelope hash covers, built from the same
 * canonical members as the signing input instead of a second JCS pass over the signed envelope.
 */
export const signEnvelopeCanonical = async (
  unsignedEnvelope: object,
  sign: (bytes: Uint8Array) => Promise<Uint8Array>,
  signatureMembers: ReadonlyArray<"sig" | "signature">
): Promise<{ readonly sig: string; readonly signedText: string }> => {
  const canonical = canonicalEnvelope(unsignedEnvelope)
  const signature = await sign(utf8.encode(canonical.signingText))
  if (signature.length !== 64) throw new TypeError("signer must return a raw 64-byte r||s signature")
  const sig = base64UrlEncode(signature)
  return { sig, signedText: canonical.signedText(Object.fromEntries(signatureMembers.map((name) => [name, sig]))) }
}
