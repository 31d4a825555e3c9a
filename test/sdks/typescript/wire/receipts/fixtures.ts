// Shared test fixtures: a signing key with its kid, and unsigned receipt bodies of each kind.
import { exportPublicJwk, generateSigningKeyPair, jwkThumbprintKid } from "../../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { GENESIS_PREV_HASH, failedChainId, newJti, rfc3339Millis, v1ChainId, v2ChainId } from "../../../../../sdks/typescript/src/wire/receipts/chain.ts"
import type { UnsignedFailedReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import type { UnsignedReceiptV1 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import type { UnsignedReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { toReceiptJwk, type ReceiptJwk } from "../../../../../sdks/typescript/src/wire/receipts/jwks.ts"
import { signerFromPrivateKey, type Signer } from "../../../../../sdks/typescript/src/wire/receipts/signer.ts"

export const NOW = new Date("2025-03-04T05:06:07.089Z")
export const NOW_SECONDS = Math.floor(NOW.getTime() / 1000)

export interface TestKey {
  readonly signer: Signer
  readonly pair: CryptoKeyPair
  readonly jwk: ReceiptJwk
}

export const makeKey = async (): Promise<TestKey> => {
  const pair = await generateSigningKeyPair()
  const publicJwk = await exportPublicJwk(pair.publicKey)
  const kid = await jwkThumbprintKid(publicJwk)
  return { signer: signerFromPrivateKey(kid, pair.privateKey), pair, jwk: toReceiptJwk(publicJwk, kid) }
}

export const unsignedV2 = (seq = 1, prevHash = GENESIS_PREV_HASH): UnsignedReceiptV2 => ({
  iss: "http://127.0.0.1:8080",
  jti: newJti(),
  iat: NOW_SECONDS,
  timestamp: rfc3339Millis(NOW),
  request_id: "chatcmpl-abc123",
  provider: "local",
  model: "local-chat",
  routing_decision: {
    from: "openai",
    to: "local",
    chosen_model: "local-chat",
    classifier: "rules",
    savings_pct: 12.5,
    strategy: "cost"
  },
  input_tokens: 17,
  output_tokens: 42,
  hash_upstream_request: "1".repeat(64),
  hash_upstream_response: "2".repeat(64),
  chain: { chain_id: v2ChainId("org_1"), seq, prev_hash: prevHash },
  extensions: { request_id: "5f0c3c9e-3a52-4d5e-9e57-8d5b2f3c1a10" }
})

export const unsignedFailed = (seq = 1, prevHash = GENESIS_PREV_HASH): UnsignedFailedReceiptV2 => ({
  iss: "http://127.0.0.1:8080",
  jti: newJti(),
  iat: NOW_SECONDS,
  timestamp: rfc3339Millis(NOW),
  status: 402,
  error_code: "insufficient_balance",
  request_id: null,
  provider: null,
  model: "local-chat",
  hash_upstream_request: null,
  hash_upstream_response: null,
  chain: { chain_id: failedChainId("org_1"), seq, prev_hash: prevHash },
  extensions: { request_id: "5f0c3c9e-3a52-4d5e-9e57-8d5b2f3c1a10" }
})

export const unsignedV1 = (seq = 1, prevHash = GENESIS_PREV_HASH): UnsignedReceiptV1 => ({
  iss: "http://127.0.0.1:8080",
  sub: "svc_abcdef",
  jti: newJti(),
  iat: NOW_SECONDS,
  chain: { chain_id: v1ChainId("acct_1"), seq, prev_hash: prevHash },
  claims: {
    capability: "completions",
    provider: "local",
    model: "local-chat",
    tokens_in: 17,
    tokens_out: 42,
    hash_upstream_request: "1".repeat(64),
    hash_upstream_response: "2".repeat(64),
    routing_decision: null,
    tokenisation_mode: "client",
    engine_version: "relay-ts/0.1.0"
  }
})
