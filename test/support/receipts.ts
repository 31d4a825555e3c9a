// Test helpers for receipts: an INDEPENDENT verifier (the `canonicalize` package, node:crypto hashes, `jose` to
// import the published JWK and WebCrypto to verify; none of the gateway's own receipt code), plus shortcuts for
// running receipt services inside a test gateway.
import canonicalize from "canonicalize"
import { Effect } from "effect"
import * as jose from "jose"
import { createHash } from "node:crypto"
import { createOrg, createPortalToken } from "../../layers/AdminOperations.ts"
import { type MeteredCall, ReceiptSealer, type SealInput } from "../../services/ReceiptSealer.ts"
import type { TestGateway } from "./gateway.ts"

export interface PublishedJwk {
  readonly kty: string
  readonly crv: string
  readonly x: string
  readonly y: string
  readonly kid: string
  readonly alg: string
  readonly use: string
}

export const fetchJwks = async (url: string): Promise<{ keys: Array<PublishedJwk> }> => {
  const res = await fetch(`${url}/api/.well-known/service-receipt-pubkeys.jwks`)
  if (res.status !== 200) throw new Error(`JWKS answered ${res.status}`)
  return res.json()
}

/** Offline verification exactly as the spec describes it, written from the spec rather than from our code. */
export const independentlyVerify = async (envelope: Record<string, unknown>, jwks: { keys: Array<PublishedJwk> }) => {
  const jwk = jwks.keys.find((k) => k.kid === envelope.kid)
  if (jwk === undefined) return false
  if ((await jose.calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, "sha256")) !== jwk.kid) return false
  const key = (await jose.importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, "ES256")) as CryptoKey
  const { sig, signature: _signature, ...unsigned } = envelope
  const bytes = new TextEncoder().encode(canonicalize(unsigned)!)
  return crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, Buffer.from(sig as string, "base64url"), bytes)
}

/** SHA-256 hex of the JCS bytes of the whole envelope: what the next receipt's prev_hash must be. */
export const independentHash = (envelope: unknown) => createHash("sha256").update(canonicalize(envelope)!).digest("hex")

export const newOrg = (gw: TestGateway, name = "receipts test org") =>
  gw.runtime.runPromise(createOrg({ name }) as Effect.Effect<{ org_id: string }, unknown, any>).then((r) => r.org_id)

export const portalToken = (gw: TestGateway, orgId: string, abilities = ["ability:keys.read"]) =>
  gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities }) as Effect.Effect<{ token: string }, unknown, any>).then(
    (r) => r.token
  )

let counter = 0
export const sealInput = (orgId: string, overrides: Partial<SealInput> = {}): SealInput => ({
  orgId,
  accountId: `acct_${orgId}`,
  keyId: "key_test",
  keyPrefix: "svc_testkey",
  requestId: crypto.randomUUID(),
  providerResponseId: `chatcmpl-${++counter}`,
  provider: "local",
  model: "local-chat",
  capability: "chat.completions",
  inputTokens: 12,
  outputTokens: 34,
  hashUpstreamRequest: createHash("sha256").update(`request ${counter}`).digest("hex"),
  hashUpstreamResponse: createHash("sha256").update(`response ${counter}`).digest("hex"),
  engineVersion: "relay-ts/0.1.0",
  ...overrides
})

let metered = 0
/**
 * A completed call's money for `settle` (layers/pg/Settlement.ts): its usage row, a debit of 1000 micros and the
 * release of `holdId`; no stored answer (the settlement benchmarks add one: bench/lib/benchCompletedCall.ts).
 */
export const meteredCall = (orgId: string, holdId: string, usageId = `use_test_${++metered}_${crypto.randomUUID().slice(0, 8)}`): MeteredCall => ({
  holdId,
  billedMicros: 1_000n,
  ledgerReference: `local/local-chat ${usageId}`,
  lowBalanceDefaultMicros: 0n,
  usage: {
    id: usageId,
    request_id: `chatcmpl-${usageId}`,
    gateway_request_id: crypto.randomUUID(),
    org_id: orgId,
    parent_org_id: null,
    key_id: "key_test",
    provider: "local",
    model: "local-chat",
    capability: "chat.completions",
    key_mode: "pooled",
    input_tokens: 12,
    output_tokens: 34,
    estimated: false,
    partial: false,
    upstream_cost_micros: "800",
    billed_micros: "1000",
    markup_micros: "200",
    trace_id: "0".repeat(32),
    started_at: new Date().toISOString()
  }
})

export const seal = (gw: TestGateway, input: SealInput) =>
  gw.runtime.runPromise(Effect.flatMap(Effect.service(ReceiptSealer), (s) => s.seal(input)))
