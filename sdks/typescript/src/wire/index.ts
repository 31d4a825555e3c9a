/**
 * `@privacy-relay/sdk/wire`: the wire format, one copy for the gateway and every TypeScript client. JCS hashing,
 * ES256 helpers, the v3 attestation (build and verify), receipt envelopes v1, v2, failed v2 and the v3
 * countersignature with their verification, the JWKS, Merkle and transparency proofs, and the webhook signature
 * schemes (sign and verify). Portable: WebCrypto only, no `node:` module, so it runs on Node, Deno and in browsers.
 * The gateway imports these files by relative path; SDK users import this subpath.
 */
export * from "./attestation/engine-allowlist.ts"
export * from "./bodyLimit.ts"
export * from "./attestation/semver.ts"
export * from "./attestation/v3.ts"
export * from "./crypto/base64.ts"
export * from "./crypto/ecdsa.ts"
export * from "./crypto/hex.ts"
export * from "./crypto/jcs.ts"
export * from "./receipts/chain.ts"
export * from "./receipts/countersign.ts"
export * from "./receipts/envelope-v1.ts"
export * from "./receipts/envelope-v2-failed.ts"
export * from "./receipts/envelope-v2.ts"
export * from "./receipts/header.ts"
export * from "./receipts/jwks.ts"
export * from "./receipts/merkle.ts"
export * from "./receipts/signer.ts"
export * from "./receipts/signing-input.ts"
export * from "./receipts/transparency.ts"
export * from "./receipts/verify.ts"
export * from "./receipts/wireFormat.ts"
export * from "./webhooks/attempts.ts"
export * from "./webhooks/hmac.ts"
export * from "./webhooks/payload.ts"
export * from "./webhooks/receiver.ts"
export * from "./webhooks/signature.ts"
// The settings machinery every program reads its environment with and the client programs' GATEWAY_URL and `~` path
// rules, as one namespace (its names, `port`, `url`, `custom`..., are too generic to export flat): the starter kit's
// server (starter-kit/settings.ts) uses it from here.
export * as Settings from "./config/index.ts"
