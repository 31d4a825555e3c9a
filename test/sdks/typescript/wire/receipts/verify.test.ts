import { describe, expect, it } from "vitest"
import { buildAttestation } from "../../../../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { envelopeHash, GENESIS_PREV_HASH } from "../../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signFailedReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import { signReceiptV1 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { keyResolverFromJwks } from "../../../../../sdks/typescript/src/wire/receipts/jwks.ts"
import { signEnvelope } from "../../../../../sdks/typescript/src/wire/receipts/signer.ts"
import { CHECK_LABELS, verifyReceipt, type VerificationResult } from "../../../../../sdks/typescript/src/wire/receipts/verify.ts"
import { makeKey, NOW, NOW_SECONDS, unsignedFailed, unsignedV1, unsignedV2 } from "./fixtures.ts"

const key = await makeKey()
const resolveKey = keyResolverFromJwks({ keys: [key.jwk] })
const verify = (envelope: unknown, previous?: unknown) =>
  verifyReceipt(envelope, { resolveKey, nowSeconds: NOW_SECONDS, ...(previous === undefined ? {} : { previous }) })

const LABELS = [
  "schema valid (OpenReceipt v1)",
  "algorithm allow-listed",
  "freshness (iat, nbf, exp)",
  "signature",
  "chain linkage (seq and prev_hash)"
]

const expectValid = (result: VerificationResult) => {
  expect(result.checks.map((c) => c.label)).toEqual(LABELS)
  expect(result.checks.map((c) => c.status)).toEqual(["ok", "ok", "ok", "ok", "ok"])
  expect(result).toMatchObject({ valid: true, reason: null })
}

/** Asserts the first failing check, that earlier ones passed and later ones were skipped. */
const expectFailure = (result: VerificationResult, label: string, detail?: RegExp) => {
  const index = LABELS.indexOf(label)
  expect(result.valid).toBe(false)
  expect(result.checks.map((c) => c.label)).toEqual(LABELS)
  expect(result.checks.map((c) => c.status)).toEqual(
    LABELS.map((_, i) => (i < index ? "ok" : i === index ? "fail" : "skipped"))
  )
  expect(result.reason).toMatch(new RegExp(`^${label.replace(/[()]/g, "\\$&")}: `))
  if (detail) expect(result.checks[index]!.detail).toMatch(detail)
}

/** Re-signs an edited envelope with the real key: models a bug or insider, not an outsider. */
const resignV2 = async (envelope: Record<string, unknown>) => {
  const { signature: _a, sig: _b, ...unsigned } = envelope
  const sig = await signEnvelope(unsigned, (bytes) => key.signer.sign(bytes))
  return { ...unsigned, signature: sig, sig }
}

describe("verifyReceipt: valid envelopes of every version", () => {
  it("exports the spec's check labels in order", () => {
    expect([...CHECK_LABELS]).toEqual(LABELS)
  })

  it("v2 round-trips sign -> verify", async () => {
    expectValid(await verify(await signReceiptV2(unsignedV2(), key.signer)))
  })

  it("failed-call v2 round-trips sign -> verify", async () => {
    expectValid(await verify(await signFailedReceiptV2(unsignedFailed(), key.signer)))
  })

  it("v1 round-trips sign -> verify", async () => {
    expectValid(await verify(await signReceiptV1(unsignedV1(), key.signer)))
  })

  it("v3 verifies against its embedded attester key, without a key lookup or chain", async () => {
    const attester = await generateSigningKeyPair()
    const attestation = await buildAttestation({
      route: "messages",
      bodyBytes: new TextEncoder().encode('{"model":"local-chat","messages":[]}'),
      detectorsFired: {},
      engine: { id: "relay-ts", version: "0.1.0", sha256: "c".repeat(64) },
      keyPair: attester,
      now: NOW
    })
    const result = await verifyReceipt(attestation, { resolveKey: async () => undefined, nowSeconds: NOW_SECONDS })
    expectValid(result)
    expect(result.checks[4]!.detail).toMatch(/not applicable/)
    const tampered = { ...attestation, claims: { "v3-attestation": { ...attestation.claims["v3-attestation"], route: "embeddings" } } }
    expectFailure(await verify(tampered), "signature", /embedded attester_public_key/)
  })

  it("accepts the envelope after a JSON round trip with reordered keys", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    const reordered = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(receipt))).reverse())
    expectValid(await verify(reordered))
  })
})

describe("verifyReceipt: tampering", () => {
  it("any changed v2 field fails the signature check", async () => {
    const receipt = (await signReceiptV2(unsignedV2(), key.signer)) as unknown as Record<string, unknown>
    const edits: Record<string, (r: Record<string, unknown>) => Record<string, unknown>> = {
      iss: (r) => ({ ...r, iss: "https://evil.example" }),
      jti: (r) => ({ ...r, jti: "f".repeat(32) }),
      iat: (r) => ({ ...r, iat: (r.iat as number) - 1 }),
      timestamp: (r) => ({ ...r, timestamp: "2020-01-01T00:00:00.000Z" }),
      request_id: (r) => ({ ...r, request_id: "chatcmpl-other" }),
      provider: (r) => ({ ...r, provider: "openai" }),
      model: (r) => ({ ...r, model: "gpt-4o" }),
      routing_decision: (r) => ({ ...r, routing_decision: { ...(r.routing_decision as object), savings_pct: 99 } }),
      input_tokens: (r) => ({ ...r, input_tokens: 1 }),
      output_tokens: (r) => ({ ...r, output_tokens: 1 }),
      hash_upstream_request: (r) => ({ ...r, hash_upstream_request: "3".repeat(64) }),
      hash_upstream_response: (r) => ({ ...r, hash_upstream_response: "4".repeat(64) }),
      "chain.seq": (r) => ({ ...r, chain: { ...(r.chain as object), seq: 2 } }),
      "chain.chain_id": (r) => ({ ...r, chain: { ...(r.chain as object), chain_id: "receipt-v2-org-other" } }),
      "extensions.request_id": (r) => ({ ...r, extensions: { request_id: "other" } }),
      "added member": (r) => ({ ...r, note: "extra" })
    }
    for (const [name, edit] of Object.entries(edits)) {
      const result = await verify(edit(receipt))
      expect({ name, failed: result.checks.find((c) => c.status === "fail")?.label }).toEqual({ name, failed: "signature" })
      expectFailure(result, "signature", /does not verify/)
    }
  })

  it("any changed v1 claim fails the signature check", async () => {
    const receipt = await signReceiptV1(unsignedV1(), key.signer)
    for (const claims of [
      { ...receipt.claims, tokens_out: 0 },
      { ...receipt.claims, engine_version: "relay-ts/9.9.9" },
      { ...receipt.claims, routing_decision: { from: "a", to: "b", chosen_model: "m", strategy: "s", classifier: "c" } }
    ]) {
      expectFailure(await verify({ ...receipt, claims }), "signature")
    }
    expectFailure(await verify({ ...receipt, sub: "svc_zzzzzz" }), "signature")
  })

  it("a signature swapped in from another receipt fails; signature and sig must be identical", async () => {
    const a = await signReceiptV2(unsignedV2(), key.signer)
    const b = await signReceiptV2(unsignedV2(), key.signer)
    expectFailure(await verify({ ...a, signature: b.sig, sig: b.sig }), "signature", /does not verify/)
    expectFailure(await verify({ ...a, signature: b.sig }), "signature", /signature and sig differ/)
    expectFailure(await verify({ ...a, signature: "AAAA", sig: "AAAA" }), "signature", /64-byte/)
    expectFailure(await verify({ ...a, signature: "a+b/", sig: "a+b/" }), "signature", /base64url/)
  })

  it("an unknown kid fails the signature check", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    expectFailure(await verify(await resignV2({ ...receipt, kid: "unknown-kid" })), "signature", /no published verification key/)
  })

  it("a broken shape fails the schema check and skips the rest", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    const { model: _model, ...withoutModel } = receipt
    expectFailure(await verify(withoutModel), "schema valid (OpenReceipt v1)", /model/)
    expectFailure(await verify({ ...receipt, v: 4 }), "schema valid (OpenReceipt v1)", /unknown envelope version/)
    expectFailure(await verify({ ...receipt, jti: "ABC" }), "schema valid (OpenReceipt v1)", /jti/)
    expectFailure(await verify({ ...receipt, timestamp: "2025-03-04T05:06:07Z" }), "schema valid (OpenReceipt v1)", /timestamp/)
    expectFailure(await verify({ ...receipt, routing_decision: { ...receipt.routing_decision, provider_id: "x" } }), "schema valid (OpenReceipt v1)", /provider_id/)
    expectFailure(await verify([receipt]), "schema valid (OpenReceipt v1)")
    expectFailure(await verify(null), "schema valid (OpenReceipt v1)")
    const failed = await signFailedReceiptV2(unsignedFailed(), key.signer)
    expectFailure(await verify({ ...failed, input_tokens: 3 }), "schema valid (OpenReceipt v1)", /no token counts/)
    expectFailure(await verify({ ...failed, status: 200 }), "schema valid (OpenReceipt v1)", /status/)
  })

  it("an algorithm off the allow-list fails the algorithm check", async () => {
    const v2 = await signReceiptV2(unsignedV2(), key.signer)
    expectFailure(await verify(await resignV2({ ...v2, alg: "HS256" })), "algorithm allow-listed", /HS256/)
    const v1 = await signReceiptV1(unsignedV1(), key.signer)
    expectFailure(await verify({ ...v1, alg: "ES256" }), "algorithm allow-listed", /expected ecdsa-p256-sha256/)
    expectFailure(await verify({ ...v1, alg: "none" }), "algorithm allow-listed")
  })
})

describe("verifyReceipt: freshness", () => {
  it("rejects iat more than 300 s in the future and accepts old receipts", async () => {
    const future = await signReceiptV2({ ...unsignedV2(), iat: NOW_SECONDS + 301 }, key.signer)
    expectFailure(await verify(future), "freshness (iat, nbf, exp)", /future/)
    expectValid(await verify(await signReceiptV2({ ...unsignedV2(), iat: NOW_SECONDS + 300 }, key.signer)))
    expectValid(await verify(await signReceiptV2({ ...unsignedV2(), iat: NOW_SECONDS - 86_400 * 365 }, key.signer)))
  })

  it("respects nbf and exp when present", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    expectFailure(await verify(await resignV2({ ...receipt, exp: NOW_SECONDS })), "freshness (iat, nbf, exp)", /expired/)
    expectValid(await verify(await resignV2({ ...receipt, exp: NOW_SECONDS + 1 })))
    expectFailure(await verify(await resignV2({ ...receipt, nbf: NOW_SECONDS + 301 })), "freshness (iat, nbf, exp)", /nbf/)
    expectFailure(await verify(await resignV2({ ...receipt, exp: "tomorrow" })), "schema valid (OpenReceipt v1)", /exp/)
  })
})

describe("verifyReceipt: chain linkage", () => {
  it("accepts a correctly linked successor and detects every kind of break", async () => {
    const first = await signReceiptV2(unsignedV2(1, GENESIS_PREV_HASH), key.signer)
    const second = await signReceiptV2(unsignedV2(2, await envelopeHash(first)), key.signer)
    expectValid(await verify(first))
    expectValid(await verify(second, first))

    const wrongHash = await signReceiptV2(unsignedV2(2, "9".repeat(64)), key.signer)
    expectFailure(await verify(wrongHash, first), "chain linkage (seq and prev_hash)", /prev_hash is not the hash/)

    const gap = await signReceiptV2(unsignedV2(3, await envelopeHash(first)), key.signer)
    expectFailure(await verify(gap, first), "chain linkage (seq and prev_hash)", /does not follow/)

    // The previous receipt re-signed (e.g. rewritten history): its hash changes, so the link breaks.
    const rewritten = await signReceiptV2({ ...unsignedV2(1), jti: first.jti, output_tokens: 1 }, key.signer)
    expectFailure(await verify(second, rewritten), "chain linkage (seq and prev_hash)", /prev_hash/)

    const otherChain = await signReceiptV2({ ...unsignedV2(1), chain: { chain_id: "receipt-v2-org-other", seq: 1, prev_hash: GENESIS_PREV_HASH } }, key.signer)
    expectFailure(await verify(second, otherChain), "chain linkage (seq and prev_hash)", /another chain/)
  })

  it("checks seq and prev_hash form and the genesis rule without a previous receipt", async () => {
    const cases: Array<[number, string, RegExp]> = [
      [0, GENESIS_PREV_HASH, /positive integer/],
      [1.5, GENESIS_PREV_HASH, /positive integer/],
      [1, "a".repeat(64), /genesis/],
      [2, GENESIS_PREV_HASH, /only seq 1/],
      [2, "ABC", /64 lowercase hex/]
    ]
    for (const [seq, prevHash, detail] of cases) {
      const receipt = await signReceiptV2(unsignedV2(seq, prevHash), key.signer)
      expectFailure(await verify(receipt), "chain linkage (seq and prev_hash)", detail)
    }
  })

  it("requires the chain id of the receipt's kind", async () => {
    const v2InTenantChain = await signReceiptV2({ ...unsignedV2(), chain: { chain_id: "tenant-acct_1", seq: 1, prev_hash: GENESIS_PREV_HASH } }, key.signer)
    expectFailure(await verify(v2InTenantChain), "chain linkage (seq and prev_hash)", /receipt-v2-org-/)
    const failedInV2Chain = await signFailedReceiptV2({ ...unsignedFailed(), chain: { chain_id: "receipt-v2-org-org_1", seq: 1, prev_hash: GENESIS_PREV_HASH } }, key.signer)
    expectFailure(await verify(failedInV2Chain), "chain linkage (seq and prev_hash)", /failed-v2-org-/)
  })

  it("links v1 receipts the same way", async () => {
    const first = await signReceiptV1(unsignedV1(1), key.signer)
    const second = await signReceiptV1(unsignedV1(2, await envelopeHash(first)), key.signer)
    expectValid(await verify(second, first))
    expectFailure(await verify(second, { ...first, sig: second.sig }), "chain linkage (seq and prev_hash)")
  })
})

describe("verifyReceipt: key rotation", () => {
  it("a receipt signed with a rotated-out key verifies while that key stays published", async () => {
    const oldKey = await makeKey()
    const newKey = await makeKey()
    const oldReceipt = await signReceiptV2(unsignedV2(), oldKey.signer)
    const newReceipt = await signReceiptV2(unsignedV2(), newKey.signer)
    const bothPublished = keyResolverFromJwks({ keys: [newKey.jwk, oldKey.jwk] })
    for (const receipt of [oldReceipt, newReceipt]) {
      expectValid(await verifyReceipt(receipt, { resolveKey: bothPublished, nowSeconds: NOW_SECONDS }))
    }
    const onlyNew = keyResolverFromJwks({ keys: [newKey.jwk] })
    expectFailure(await verifyReceipt(oldReceipt, { resolveKey: onlyNew, nowSeconds: NOW_SECONDS }), "signature", /no published verification key/)
  })

  it("a receipt claiming the new kid but signed by the old key fails", async () => {
    const oldKey = await makeKey()
    const newKey = await makeKey()
    const forged = await signReceiptV2(unsignedV2(), { kid: newKey.jwk.kid, sign: oldKey.signer.sign })
    const resolver = keyResolverFromJwks({ keys: [newKey.jwk, oldKey.jwk] })
    expectFailure(await verifyReceipt(forged, { resolveKey: resolver, nowSeconds: NOW_SECONDS }), "signature", /does not verify/)
  })

  it("a failing key lookup is reported as a signature failure, not thrown", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    const result = await verifyReceipt(receipt, { resolveKey: async () => Promise.reject(new Error("db down")), nowSeconds: NOW_SECONDS })
    expectFailure(result, "signature", /lookup failed/)
  })
})
