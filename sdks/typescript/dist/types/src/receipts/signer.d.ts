export interface Signer {
    /** Key id published in the JWKS (the RFC 7638 thumbprint of the public key). */
    readonly kid: string;
    /** ES256 over `bytes`, returning raw r||s (64 bytes). */
    sign(bytes: Uint8Array): Promise<Uint8Array>;
}
/** A signer backed by a WebCrypto P-256 private key. */
export declare const signerFromPrivateKey: (kid: string, privateKey: CryptoKey) => Signer;
/** base64url (no padding) raw r||s signature over the envelope's signing input. */
export declare const signEnvelope: (unsignedEnvelope: object, sign: (bytes: Uint8Array) => Promise<Uint8Array>) => Promise<string>;
