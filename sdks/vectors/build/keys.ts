// The fixed keys of the vectors and their deterministic signer. The private scalars are derived from public labels
// (SHA-256 of the label), so anyone can rebuild them; they are TEST keys and must never sign anything real.
// Signatures are ECDSA P-256 with SHA-256 and RFC 6979 deterministic nonces, without low-S normalisation (the plain
// RFC 6979 output, what other languages' RFC 6979 implementations produce), encoded raw r||s (64 bytes).
import { p256 } from "@noble/curves/nist.js"
import { base64UrlDecode, base64UrlEncode } from "../../typescript/src/wire/crypto/base64.ts"
import { importPrivateJwk, jwkThumbprintKid, type PrivateJwk, type PublicJwk } from "../../typescript/src/wire/crypto/ecdsa.ts"
import { bytesToHex } from "../../typescript/src/wire/crypto/hex.ts"
import { toReceiptJwk, type ReceiptJwk } from "../../typescript/src/wire/receipts/jwks.ts"
import type { Signer } from "../../typescript/src/wire/receipts/signer.ts"

export interface FixedKey {
  /** Where the private scalar comes from: d = SHA-256(UTF-8 label). */
  readonly label: string
  readonly privateJwk: PrivateJwk
  readonly publicJwk: PublicJwk
  /** RFC 7638 thumbprint (the receipt key id). */
  readonly kid: string
  /** Deterministic ES256 over `bytes`: raw r||s. */
  readonly sign: (bytes: Uint8Array) => Uint8Array
  /** The same key for WebCrypto (the gateway's and the engine's own signing code). */
  readonly cryptoKeyPair: () => Promise<CryptoKeyPair>
}

const sha256 = async (text: string) =>
  new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))

export const deterministicSign = (d: Uint8Array, bytes: Uint8Array): Uint8Array =>
  p256.sign(bytes, d, { prehash: true, lowS: false })

export const fixedKey = async (label: string): Promise<FixedKey> => {
  const d = await sha256(label)
  const point = p256.getPublicKey(d, false) // 0x04 || x || y
  const publicJwk: PublicJwk = { kty: "EC", crv: "P-256", x: base64UrlEncode(point.slice(1, 33)), y: base64UrlEncode(point.slice(33, 65)) }
  const privateJwk: PrivateJwk = { ...publicJwk, d: base64UrlEncode(d) }
  return {
    label,
    privateJwk,
    publicJwk,
    kid: await jwkThumbprintKid(publicJwk),
    sign: (bytes) => deterministicSign(d, bytes),
    cryptoKeyPair: async () => {
      const privateKey = await importPrivateJwk(privateJwk, { extractable: true })
      const publicKey = await globalThis.crypto.subtle.importKey("jwk", { ...publicJwk }, { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"])
      return { privateKey, publicKey }
    }
  }
}

export const DEVICE_KEY_LABEL = "privacy-relay test vectors: device attestation key"
export const GATEWAY_KEY_LABEL = "privacy-relay test vectors: gateway receipt key"
/** The gateway's receipt key before a rotation (transparency.json: heads kept from then still verify). */
export const PREVIOUS_GATEWAY_KEY_LABEL = "privacy-relay test vectors: gateway receipt key of the previous quarter"

/** A receipt Signer over the fixed key, for the gateway's envelope builders. */
export const signerOf = (key: FixedKey): Signer => ({ kid: key.kid, sign: async (bytes) => key.sign(bytes) })

export const receiptJwkOf = (key: FixedKey): ReceiptJwk => toReceiptJwk(key.publicJwk, key.kid)

/** What a vector file says about a key. */
export const describeKey = (key: FixedKey) => ({
  derivation: `d = SHA-256(UTF-8 "${key.label}")`,
  d_hex: bytesToHex(base64UrlDecode(key.privateJwk.d)),
  private_jwk: key.privateJwk,
  public_jwk: key.publicJwk,
  kid: key.kid
})

/** The clock of every vector: 2025-01-01T00:00:00.000Z. */
export const VECTOR_NOW = new Date("2025-01-01T00:00:00.000Z")
export const VECTOR_NOW_SECONDS = Math.floor(VECTOR_NOW.getTime() / 1000)

export const SIGNATURE_SCHEME =
  "ECDSA P-256 with SHA-256 over the JCS bytes of the envelope without sig/signature; RFC 6979 deterministic nonce, no low-S normalisation; raw r||s (64 bytes) in base64url without padding"

/** A signature with one character changed (not the last, whose trailing bits must stay zero): still 64 bytes. */
export const alterSignature = (sig: string): string => sig.slice(0, -2) + (sig.at(-2) === "A" ? "B" : "A") + sig.at(-1)
