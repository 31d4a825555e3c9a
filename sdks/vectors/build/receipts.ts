// receipts.json: gateway receipts of every kind (v1, v2, failed v2, v3 countersignature) signed with a fixed gateway
// key, and what verifyReceipt / verifyChain answer for them and for tampered copies.
import type { V3Envelope } from "../../typescript/src/wire/attestation/v3.ts"
import { envelopeHash, failedChainId, GENESIS_PREV_HASH, rfc3339Millis, v1ChainId, v2ChainId } from "../../typescript/src/wire/receipts/chain.ts"
import { countersignAttestation } from "../../typescript/src/wire/receipts/countersign.ts"
import { signFailedReceiptV2, type FailedReceiptV2 } from "../../typescript/src/wire/receipts/envelope-v2-failed.ts"
import { signReceiptV1, type ReceiptV1 } from "../../typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2, type ReceiptV2 } from "../../typescript/src/wire/receipts/envelope-v2.ts"
import { encodeEnvelopeHeader } from "../../typescript/src/wire/receipts/header.ts"
import { signEnvelope } from "../../typescript/src/wire/receipts/signer.ts"
import { verifyChain, verifyChainExport, verifyReceipt } from "../../typescript/src/verify/index.ts"
import { encodeAttestationHeader } from "../../typescript/src/wire/attestation/v3.ts"
import { alterSignature, describeKey, receiptJwkOf, SIGNATURE_SCHEME, signerOf, VECTOR_NOW, VECTOR_NOW_SECONDS, type FixedKey } from "./keys.ts"

export const VECTOR_ISS = "https://relay.example"
const ORG = "org_vectors"
const EXPORT_ORG = "org_vectors_export"
const ACCOUNT = "acct_vectors"

const jtiOf = (n: number) => n.toString(16).padStart(32, "0")
const at = (offsetSeconds: number) => new Date(VECTOR_NOW.getTime() + offsetSeconds * 1000)
const hex = (c: string) => c.repeat(64)

export interface VectorReceipts {
  readonly v2: ReadonlyArray<ReceiptV2>
  /** Another seq 1 of the same v2 chain: a fork, for the broken-link case. */
  readonly v2Fork: ReceiptV2
  readonly failed: ReadonlyArray<FailedReceiptV2>
  readonly v1: ReadonlyArray<ReceiptV1>
  readonly countersignature: Record<string, unknown>
  readonly translatedCountersignature: Record<string, unknown>
  /** A translated OpenAI Responses call (openai-responses -> anthropic). */
  readonly responsesCountersignature: Record<string, unknown>
}

/** The receipts, built with the gateway's own envelope builders and the fixed key's deterministic signer. */
export const buildVectorReceipts = async (gateway: FixedKey, attestation: V3Envelope): Promise<VectorReceipts> => {
  const signer = signerOf(gateway)
  const v2 = async (n: number, seq: number, prev: string) =>
    signReceiptV2({
      iss: VECTOR_ISS,
      jti: jtiOf(0x200 + n),
      iat: VECTOR_NOW_SECONDS + n,
      timestamp: rfc3339Millis(at(n)),
      request_id: `chatcmpl-vectors-${n}`,
      provider: "local",
      model: "local-chat",
      ...(n === 2 ? { routing_decision: { from: "openai", to: "local", chosen_model: "local-chat", classifier: "rules", savings_pct: 12.5, strategy: "cost" } } : {}),
      input_tokens: 10 + n,
      output_tokens: 20 + n,
      hash_upstream_request: hex(String(n)),
      hash_upstream_response: hex("a"),
      chain: { chain_id: v2ChainId(ORG), seq, prev_hash: prev },
      extensions: { request_id: `00000000-0000-4000-8000-00000000020${n}` }
    }, signer)
  const v2Chain: Array<ReceiptV2> = []
  for (let n = 1; n <= 3; n++) v2Chain.push(await v2(n, n, n === 1 ? GENESIS_PREV_HASH : await envelopeHash(v2Chain[n - 2]!)))
  const v2Fork = await v2(9, 1, GENESIS_PREV_HASH)

  const failed: Array<FailedReceiptV2> = []
  for (let n = 1; n <= 2; n++) {
    failed.push(await signFailedReceiptV2({
      iss: VECTOR_ISS,
      jti: jtiOf(0x300 + n),
      iat: VECTOR_NOW_SECONDS + n,
      timestamp: rfc3339Millis(at(n)),
      status: n === 1 ? 404 : 402,
      error_code: n === 1 ? "model_not_found" : "insufficient_balance",
      request_id: null,
      provider: null,
      model: n === 1 ? "no-such-model" : "local-chat",
      hash_upstream_request: null,
      hash_upstream_response: null,
      chain: { chain_id: failedChainId(ORG), seq: n, prev_hash: n === 1 ? GENESIS_PREV_HASH : await envelopeHash(failed[0]!) },
      extensions: { request_id: `00000000-0000-4000-8000-00000000030${n}` }
    }, signer))
  }

  const v1: Array<ReceiptV1> = []
  for (let n = 1; n <= 2; n++) {
    v1.push(await signReceiptV1({
      iss: VECTOR_ISS,
      sub: "svc_vectors",
      jti: jtiOf(0x200 + n),
      iat: VECTOR_NOW_SECONDS + n,
      chain: { chain_id: v1ChainId(ACCOUNT), seq: n, prev_hash: n === 1 ? GENESIS_PREV_HASH : await envelopeHash(v1[0]!) },
      claims: {
        capability: "chat.completions",
        provider: "local",
        model: "local-chat",
        tokens_in: 10 + n,
        tokens_out: 20 + n,
        hash_upstream_request: hex(String(n)),
        hash_upstream_response: hex("a"),
        routing_decision: null,
        tokenisation_mode: "client",
        engine_version: "relay-ts/0.4.0"
      }
    }, signer))
  }

  const egress = attestation.claims["v3-attestation"].egress_sha256
  const cs = await countersignAttestation({
    attestation,
    provider: "local",
    model: "local-chat",
    hashUpstreamRequest: egress,
    hashUpstreamResponse: hex("b"),
    iss: VECTOR_ISS,
    signer,
    witness: "relayed",
    receiptJti: v2Chain[0]!.jti,
    now: VECTOR_NOW
  })
  const { sig: _random, ...unsigned } = { ...cs, jti: jtiOf(0x400) }
  const countersignature = { ...unsigned, sig: await signEnvelope(unsigned, (bytes) => signer.sign(bytes)) }
  // A translated call: the attested OpenAI-format body went to Gemini's own format, so the relayed body's hash differs.
  const translatedCs = await countersignAttestation({
    attestation,
    provider: "google",
    model: "gemini-2.5-flash",
    hashUpstreamRequest: hex("c"),
    hashUpstreamResponse: hex("d"),
    iss: VECTOR_ISS,
    signer,
    witness: "relayed",
    receiptJti: null,
    translation: { from: "openai", to: "gemini" },
    now: VECTOR_NOW
  })
  const { sig: _random2, ...unsignedTranslated } = { ...translatedCs, jti: jtiOf(0x401) }
  const translatedCountersignature = { ...unsignedTranslated, sig: await signEnvelope(unsignedTranslated, (bytes) => signer.sign(bytes)) }
  // An OpenAI Responses call served by an Anthropic-format provider (through the chat completion shape).
  const responsesCs = await countersignAttestation({
    attestation,
    provider: "anthropic",
    model: "claude-haiku-4-5-20251001",
    hashUpstreamRequest: hex("e"),
    hashUpstreamResponse: hex("f"),
    iss: VECTOR_ISS,
    signer,
    witness: "relayed",
    receiptJti: null,
    translation: { from: "openai-responses", to: "anthropic" },
    now: VECTOR_NOW
  })
  const { sig: _random3, ...unsignedResponses } = { ...responsesCs, jti: jtiOf(0x402) }
  const responsesCountersignature = { ...unsignedResponses, sig: await signEnvelope(unsignedResponses, (bytes) => signer.sign(bytes)) }
  return { v2: v2Chain, v2Fork, failed, v1, countersignature, translatedCountersignature, responsesCountersignature }
}

interface ReceiptCase {
  readonly name: string
  /** What to verify: a header value (string) or the envelope object. */
  readonly input: unknown
  readonly previous?: unknown
  readonly attestation?: unknown
  readonly now_seconds: number
}

/** What verifyChain answers, as the vectors write it. */
const chainExpected = (result: Awaited<ReturnType<typeof verifyChain>>) => ({
  valid: result.valid,
  verified: result.verified,
  break: result.break === null ? null : { index: result.break.index, seq: result.break.seq, kind: result.break.kind, reason: result.break.reason },
  gaps: result.gaps.map((g) => ({ index: g.index, after_seq: g.afterSeq, seq: g.seq }))
})

/**
 * Six v2 receipts of another organisation's chain, for the export cases, and two receipts signed for its seq 3 that
 * are not the one it holds: one linked to seq 2 (a fork the gateway would never sign), one not.
 */
const buildExportChain = async (gateway: FixedKey) => {
  const signer = signerOf(gateway)
  const receipt = (n: number, seq: number, prev: string, outputTokens: number) =>
    signReceiptV2({
      iss: VECTOR_ISS,
      jti: jtiOf(0x500 + n),
      iat: VECTOR_NOW_SECONDS + n,
      timestamp: rfc3339Millis(at(n)),
      request_id: `chatcmpl-export-${n}`,
      provider: "local",
      model: "local-chat",
      input_tokens: 5,
      output_tokens: outputTokens,
      hash_upstream_request: hex((n % 10).toString()),
      hash_upstream_response: hex("e"),
      chain: { chain_id: v2ChainId(EXPORT_ORG), seq, prev_hash: prev },
      extensions: { request_id: `00000000-0000-4000-8000-0000000005${String(n).padStart(2, "0")}` }
    }, signer)
  const chain: Array<ReceiptV2> = []
  for (let n = 1; n <= 6; n++) chain.push(await receipt(n, n, n === 1 ? GENESIS_PREV_HASH : await envelopeHash(chain[n - 2]!), 10 + n))
  const substitute = await receipt(13, 3, await envelopeHash(chain[1]!), 999)
  const unlinked = await receipt(23, 3, hex("f"), 999)
  return { chain, substitute, unlinked }
}

export const buildReceiptVectors = async (gateway: FixedKey, attestations: ReadonlyArray<V3Envelope>) => {
  const r = await buildVectorReceipts(gateway, attestations[0]!)
  const jwks = { keys: [receiptJwkOf(gateway)] }
  const now = VECTOR_NOW_SECONDS + 60
  const [a, b, c] = r.v2 as [ReceiptV2, ReceiptV2, ReceiptV2]
  const [f1, f2] = r.failed as [FailedReceiptV2, FailedReceiptV2]
  const [w1, w2] = r.v1 as [ReceiptV1, ReceiptV1]
  const cs = r.countersignature
  const altered = alterSignature(b.sig)
  const cases: ReadonlyArray<ReceiptCase> = [
    { name: "v2 X-Service-Receipt-V2 header value, seq 1", input: encodeEnvelopeHeader(a), now_seconds: now },
    { name: "v2 object, seq 2, with its previous receipt", input: b, previous: a, now_seconds: now },
    { name: "v2 as JSON text, with a routing_decision", input: JSON.stringify(b), now_seconds: now },
    { name: "failed X-Service-Receipt-Failed header value, seq 1", input: encodeEnvelopeHeader(f1), now_seconds: now },
    { name: "failed object, seq 2, with its previous receipt", input: f2, previous: f1, now_seconds: now },
    { name: "stored v1, seq 2, with its previous receipt", input: w2, previous: w1, now_seconds: now },
    { name: "v3 countersignature X-Service-Receipt-V3 header value", input: encodeEnvelopeHeader(cs), now_seconds: now },
    { name: "v3 countersignature with the attestation it countersigns", input: cs, attestation: encodeAttestationHeader(attestations[0]!), now_seconds: now },
    { name: "v3 countersignature of a translated call (openai -> gemini)", input: r.translatedCountersignature, now_seconds: now },
    { name: "v3 countersignature of a translated Responses API call (openai-responses -> anthropic)", input: r.responsesCountersignature, now_seconds: now },
    { name: "v3 attestation (verifies with its embedded key)", input: attestations[0]!, now_seconds: now },
    { name: "old receipts stay valid (a year later)", input: a, now_seconds: now + 365 * 86_400 },
    { name: "tampered: bad signature", input: { ...b, signature: altered, sig: altered }, now_seconds: now },
    { name: "tampered: unknown kid", input: { ...b, kid: "unknown-kid-not-in-the-jwks" }, now_seconds: now },
    { name: "tampered: changed field (output_tokens)", input: { ...b, output_tokens: 999_999 }, now_seconds: now },
    { name: "tampered: failed receipt with a changed error_code", input: { ...f1, error_code: "rate_limited" }, now_seconds: now },
    { name: "tampered: v1 with a changed sub", input: { ...w1, sub: "svc_someone_else" }, now_seconds: now },
    { name: "tampered: countersignature with a changed provider", input: { ...cs, provider: "openai" }, now_seconds: now },
    { name: "broken chain link: previous is another seq 1 of the chain (a fork)", input: b, previous: r.v2Fork, now_seconds: now },
    { name: "broken chain link: seq 3 after seq 1 (a gap)", input: c, previous: a, now_seconds: now },
    { name: "broken chain link: previous of another chain", input: b, previous: f1, now_seconds: now },
    { name: "countersignature bound to another attestation", input: cs, attestation: attestations[1]!, now_seconds: now },
    { name: "v2 with signature and sig differing", input: { ...b, signature: a.sig }, now_seconds: now },
    { name: "alg not allowed", input: { ...b, alg: "none" }, now_seconds: now },
    { name: "iat more than 300 s in the future", input: c, now_seconds: c.iat - 301 },
    { name: "schema: jti missing", input: (({ jti: _jti, ...rest }) => rest)(b), now_seconds: now },
    { name: "unknown envelope version", input: { ...b, v: 4 }, now_seconds: now },
    {
      name: "schema: countersignature translated from a format no relay route speaks",
      input: { ...r.translatedCountersignature, translation: { from: "gemini", to: "openai" } },
      now_seconds: now
    },
    { name: "not an envelope: neither JSON nor base64", input: "this is not a receipt", now_seconds: now }
  ]
  const e = await buildExportChain(gateway)
  const [e1, e2, e3, e4, e5, e6] = e.chain as [ReceiptV2, ReceiptV2, ReceiptV2, ReceiptV2, ReceiptV2, ReceiptV2]
  const chains: ReadonlyArray<{ name: string; receipts: ReadonlyArray<unknown>; allow_gaps?: boolean }> = [
    { name: "intact v2 chain as header values", receipts: r.v2.map(encodeEnvelopeHeader) },
    { name: "intact failed chain", receipts: r.failed },
    { name: "intact v1 chain", receipts: r.v1 },
    { name: "export starting after seq 1", receipts: [b, c] },
    { name: "gap: seq 2 missing", receipts: [a, c] },
    { name: "reordered", receipts: [b, a, c] },
    { name: "changed receipt in the middle", receipts: [a, { ...b, input_tokens: 0 }, c] },
    { name: "fork: seq 2 follows another seq 1", receipts: [r.v2Fork, b] },
    { name: "a countersignature in a chain", receipts: [a, cs] },
    { name: "intact chain of six", receipts: e.chain },
    { name: "gap: seq 3 and 4 missing", receipts: [e1, e2, e5, e6] },
    { name: "gaps allowed: a client's own receipts of a shared chain", receipts: [e1, e2, e5, e6], allow_gaps: true },
    { name: "gaps allowed, but a receipt after the gap was changed", receipts: [e1, e2, { ...e5, output_tokens: 1 }, e6], allow_gaps: true },
    { name: "reordered: seq 4 before seq 3", receipts: [e1, e2, e4, e3, e5, e6] },
    { name: "reordered: seq 5 listed first", receipts: [e5, e1, e2, e3, e4, e6] },
    { name: "reordered, gaps allowed (a reordering is never a gap)", receipts: [e1, e2, e4, e3, e5, e6], allow_gaps: true },
    { name: "substituted: seq 3 swapped for another receipt signed for seq 3", receipts: [e1, e2, e.substitute, e4, e5, e6] },
    { name: "substituted: seq 3 swapped for a receipt that does not link to seq 2", receipts: [e1, e2, e.unlinked, e4, e5, e6] },
    { name: "duplicate: seq 3 twice", receipts: [e1, e2, e3, e3, e4] },
    { name: "other chain: a receipt of another organisation's chain", receipts: [e1, e2, c, e4] },
    { name: "tampered: seq 4 changed", receipts: [e1, e2, e3, { ...e4, model: "gpt-4o" }, e5, e6] }
  ]
  const exportOf = (receipts: ReadonlyArray<unknown>) => {
    const byChain = new Map<string, Array<unknown>>()
    for (const x of receipts) {
      const id = (x as { chain: { chain_id: string } }).chain.chain_id
      byChain.set(id, [...(byChain.get(id) ?? []), x])
    }
    const exported = [...byChain].map(([chain_id, list]) => ({ chain_id, count: list.length, receipts: list }))
    return { chains: exported, jsonl: exported.flatMap((x) => x.receipts.map((y) => JSON.stringify(y))).join("\n") }
  }
  const exports: ReadonlyArray<{ name: string; input: unknown; allow_gaps?: boolean }> = [
    { name: "receipt_chain_export output: two intact chains", input: exportOf([...e.chain, ...r.failed]) },
    { name: "receipt_chain_export output as JSON text", input: JSON.stringify(exportOf(e.chain)) },
    { name: "its jsonl text", input: exportOf([...e.chain, ...r.failed]).jsonl },
    { name: "an array of header values of two chains", input: [...e.chain, ...r.failed].map(encodeEnvelopeHeader) },
    { name: "one chain intact, one with a gap", input: exportOf([...r.failed, e1, e2, e4, e5]) },
    { name: "a gap, allowed", input: exportOf([e1, e2, e4, e5]), allow_gaps: true },
    { name: "jsonl with seq 3 substituted", input: exportOf([e1, e2, e.substitute, e4]).jsonl },
    { name: "jsonl reordered", input: exportOf([e1, e3, e2, e4]).jsonl },
    { name: "jsonl with a line that is not a receipt", input: `${JSON.stringify(e1)}\nnot a receipt\n${JSON.stringify(e2)}` },
    { name: "an empty export", input: { chains: [], jsonl: "" } }
  ]
  return {
    description:
      "Gateway receipts signed with a fixed gateway key. `cases`: pass `input` (a header value string, or the envelope object) to verifyReceipt with `jwks`, `now_seconds` and, when present, `previous` and `attestation`; the answer must equal `expected` exactly (valid, reason, and the five checks with label, status and detail). `chains`: pass `receipts` to verifyChain; compare valid, verified and the first break (index, seq, reason). prev_hash of a receipt = SHA-256 of the JCS bytes of the previous receipt including its signature.",
    version: 1,
    signature_scheme: SIGNATURE_SCHEME,
    gateway_key: describeKey(gateway),
    jwks,
    receipts: { v2: r.v2, v2_fork: r.v2Fork, failed: r.failed, v1: r.v1, countersignature: cs, translated_countersignature: r.translatedCountersignature },
    cases: await Promise.all(cases.map(async (c) => ({
      ...c,
      expected: await verifyReceipt(c.input as string, {
        jwks,
        nowSeconds: c.now_seconds,
        ...(c.previous === undefined ? {} : { previous: c.previous as object }),
        ...(c.attestation === undefined ? {} : { attestation: c.attestation as object })
      })
    }))),
    chains: await Promise.all(chains.map(async (c) => ({
      ...c,
      now_seconds: now,
      expected: chainExpected(await verifyChain(c.receipts as Array<object>, { jwks, nowSeconds: now, allowGaps: c.allow_gaps === true }))
    }))),
    chain_exports: await Promise.all(exports.map(async (x) => {
      const result = await verifyChainExport(x.input, { jwks, nowSeconds: now, allowGaps: x.allow_gaps === true })
      return {
        ...x,
        now_seconds: now,
        expected: { valid: result.valid, chains: result.chains.map((chain) => ({ chain_id: chain.chainId, count: chain.count, ...chainExpected(chain) })) }
      }
    }))
  }
}
