/** The public members of a P-256 JWK; what we publish and embed (never `d`). */
export interface PublicJwk {
    readonly kty: "EC";
    readonly crv: "P-256";
    readonly x: string;
    readonly y: string;
}
/** A private P-256 JWK as WebCrypto exports it (extra members such as key_ops are allowed). */
export interface PrivateJwk extends PublicJwk {
    readonly d: string;
}
/** True when value is an EC P-256 public JWK with 32-byte base64url coordinates. */
export declare const isPublicJwk: (value: unknown) => value is PublicJwk;
/** True for a 32-byte value in base64url without padding (43 characters): a P-256 coordinate or private scalar. */
export declare const isP256FieldElement: (value: unknown) => boolean;
/**
 * A fresh P-256 key pair. The private key is extractable by default because the gateway stores its
 * receipt keys (encrypted under the KEK); pass `extractable: false` for keys that must never leave
 * the runtime (an on-device attester).
 */
export declare const generateSigningKeyPair: (options?: {
    readonly extractable?: boolean;
}) => Promise<CryptoKeyPair>;
/** The public JWK (kty, crv, x, y only) of a public key, or of an extractable private key. */
export declare const exportPublicJwk: (key: CryptoKey) => Promise<PublicJwk>;
/** The private JWK (kty, crv, x, y, d) of an extractable private key, for encrypted storage. */
export declare const exportPrivateJwk: (privateKey: CryptoKey) => Promise<PrivateJwk>;
/** Imports a public P-256 JWK as a verify-only key. Members other than kty/crv/x/y are ignored. */
export declare const importPublicJwk: (jwk: unknown) => Promise<CryptoKey>;
/** Imports a private P-256 JWK as a sign-only key (not extractable unless asked). */
export declare const importPrivateJwk: (jwk: PrivateJwk, options?: {
    readonly extractable?: boolean;
}) => Promise<CryptoKey>;
/** ES256 signature over `bytes`: raw r||s, 64 bytes. */
export declare const signRaw: (privateKey: CryptoKey, bytes: Uint8Array) => Promise<Uint8Array>;
/** Verifies a raw r||s ES256 signature. Any malformed input answers false, never throws. */
export declare const verifyRaw: (publicKey: CryptoKey, signature: Uint8Array, bytes: Uint8Array) => Promise<boolean>;
/**
 * RFC 7638 JWK thumbprint (SHA-256, base64url): the key id we publish. The required members of an
 * EC key (crv, kty, x, y) in lexicographic order without whitespace are exactly their JCS form.
 */
export declare const jwkThumbprintKid: (jwk: PublicJwk) => Promise<string>;
/** SPKI DER bytes of a public P-256 JWK. */
export declare const publicJwkToSpkiDer: (jwk: PublicJwk) => Uint8Array;
/** `-----BEGIN PUBLIC KEY-----` PEM (SPKI, 64-character lines) of a public P-256 JWK. */
export declare const publicJwkToPem: (jwk: PublicJwk) => string;
