import { Effect } from "effect"
import * as jose from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rotateReceiptKeys } from "../../../layers/AdminOperations.ts"
import { buildAttestation } from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { jsonBodySha256Hex } from "../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { encodeEnvelopeHeader } from "../../../sdks/typescript/src/wire/receipts/header.ts"
import { hexToBytes } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { verifyInclusion } from "../../../sdks/typescript/src/wire/receipts/merkle.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fetchJwks, independentHash, independentlyVerify, newOrg, portalToken, seal, sealInput } from "../../support/receipts.ts"

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway({ RECEIPT_CHAIN_VERIFY_MS: "0", TRANSPARENCY_SEQUENCE_MS: "0" })
})
afterAll(() => gw.close())

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) })
const verify = (body: unknown, headers?: Record<string, string>) => post("/api/v1/receipts/verify", body, headers)
const get = (path: string, token?: string) => fetch(`${gw.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })

const selfServiceKey = async () => {
  const res = await fetch(`${gw.url}/api/v1/self-service/key`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
  const body = await res.json()
  const [row] = await gw.query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", body.key_prefix)
  return { apiKey: body.api_key as string, orgId: row!.org_id }
}

describe("receipt keys", () => {
  it("publishes the JWKS with kid = RFC 7638 thumbprint and the current key as PEM", async () => {
    const jwks = await fetchJwks(gw.url)
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1)
    const [current] = jwks.keys
    expect(current).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" })
    expect(current).not.toHaveProperty("d")
    expect(current!.kid).toBe(await jose.calculateJwkThumbprint(current as jose.JWK, "sha256"))
    const pem = await fetch(`${gw.url}/api/.well-known/service-receipt-pubkey.pem`)
    expect(pem.headers.get("content-type")).toMatch(/^application\/x-pem-file/)
    const fromPem = await jose.exportJWK(await jose.importSPKI(await pem.text(), "ES256", { extractable: true }))
    expect({ x: fromPem.x, y: fromPem.y }).toEqual({ x: current!.x, y: current!.y })
  })

  it("stores the private key only encrypted", async () => {
    const rows = await gw.query<{ private_key_enc: string }>("SELECT private_key_enc FROM receipt_signing_keys")
    for (const row of rows) {
      expect(row.private_key_enc).toMatch(/^aead1\./)
      expect(row.private_key_enc).not.toMatch(/"d"/)
    }
  })

  it("rotation: new receipts use the new kid, old receipts still verify, and every key stays published", async () => {
    const orgId = await newOrg(gw)
    const before = await seal(gw, sealInput(orgId))
    const rotated = await gw.runtime.runPromise(rotateReceiptKeys as Effect.Effect<{ kid: string; previous_kid: string | null }, unknown, any>)
    expect(rotated.previous_kid).toBe(before.v2.kid)
    expect(rotated.kid).not.toBe(before.v2.kid)
    const after = await seal(gw, sealInput(orgId))
    expect(after.v2.kid).toBe(rotated.kid)
    const jwks = await fetchJwks(gw.url)
    expect(jwks.keys[0]!.kid).toBe(rotated.kid)
    expect(jwks.keys.map((k) => k.kid)).toContain(before.v2.kid)
    for (const envelope of [before.v2, before.v1, after.v2]) {
      expect(await independentlyVerify(envelope as any, jwks)).toBe(true)
      expect((await verify(envelope)).status).toBe(200)
    }
    // the chain links across the rotation
    expect(after.v2.chain.prev_hash).toBe(independentHash(before.v2))
  })

  it("rotates over HTTP for an admin portal token only", async () => {
    const orgId = await newOrg(gw)
    const admin = await portalToken(gw, orgId, ["ability:admin"])
    const reader = await portalToken(gw, orgId)
    expect((await post("/api/admin/receipts/keys/rotate", {}, { authorization: `Bearer ${reader}` })).status).toBe(403)
    const res = await post("/api/admin/receipts/keys/rotate", {}, { authorization: `Bearer ${admin}` })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect((await fetchJwks(gw.url)).keys[0]!.kid).toBe(body.kid)
  })
})

describe("POST /api/v1/receipts/verify", () => {
  it("accepts shape A (envelope as root) and shape B ({receipt}: object or header value) for v2, v1 and failed receipts", async () => {
    const orgId = await newOrg(gw)
    const { v2, v1 } = await seal(gw, sealInput(orgId))
    const failed = await gw.runtime.runPromise(Effect.flatMap(Effect.service((await import("../../../services/ReceiptSealer.ts")).ReceiptSealer), (s) =>
      s.sealFailed({ orgId, keyId: "k", requestId: "r", status: 429, errorCode: "rate_limited" })))
    for (const body of [v2, { receipt: v2 }, { receipt: encodeEnvelopeHeader(v2) }, v1, { receipt: v1 }, failed]) {
      const res = await verify(body)
      expect(res.status).toBe(200)
      const result = await res.json()
      expect(result.valid).toBe(true)
      expect(result.reason).toBeNull()
      expect(result.checks.map((c: any) => c.label)).toEqual([
        "schema valid (OpenReceipt v1)",
        "algorithm allow-listed",
        "freshness (iat, nbf, exp)",
        "signature",
        "chain linkage (seq and prev_hash)"
      ])
      expect(result.checks.every((c: any) => c.status === "ok")).toBe(true)
    }
  })

  it("checks the link against the stored previous receipt", async () => {
    const orgId = await newOrg(gw)
    await seal(gw, sealInput(orgId))
    const second = await seal(gw, sealInput(orgId))
    const result = await (await verify(second.v2)).json()
    expect(result.checks[4].detail).toMatch(/follows seq 1 and prev_hash matches/)
  })

  it("answers 422 naming the failing check for a changed field, a swapped signature, a reordered seq and a removed predecessor", async () => {
    const orgId = await newOrg(gw)
    const a = await seal(gw, sealInput(orgId))
    const b = await seal(gw, sealInput(orgId))
    const c = await seal(gw, sealInput(orgId))
    const failing = async (body: unknown) => {
      const res = await verify(body)
      expect(res.status).toBe(422)
      const result = await res.json()
      expect(result.valid).toBe(false)
      return result.checks.find((check: any) => check.status === "fail").label
    }
    expect(await failing({ ...b.v2, model: "gpt-4o" })).toBe("signature")
    expect(await failing({ ...b.v2, sig: a.v2.sig, signature: a.v2.sig })).toBe("signature")
    expect(await failing({ ...b.v2, chain: { ...b.v2.chain, seq: 5 } })).toBe("signature")
    expect(await failing({ ...b.v2, alg: "HS256" })).toBe("algorithm allow-listed")
    expect(await failing({ ...b.v2, jti: "nope" })).toBe("schema valid (OpenReceipt v1)")
    await gw.query("DELETE FROM receipts_v2 WHERE jti = $1", b.jti)
    const res = await verify(c.v2)
    expect(res.status).toBe(422)
    const result = await res.json()
    expect(result.reason).toMatch(/^chain linkage \(seq and prev_hash\): receipt seq 2 .* missing/)
  })

  it("answers 401 auth_required for shape C with or without a key, and 400 invalid_payload for anything else", async () => {
    const { apiKey } = await selfServiceKey()
    for (const headers of [{}, { authorization: `Bearer ${apiKey}` }] as Array<Record<string, string>>) {
      const res = await verify({ jti: "0".repeat(32) }, headers)
      expect(res.status).toBe(401)
      expect((await res.json()).error.code).toBe("auth_required")
    }
    for (const body of ["[1,2]", "\"x\"", "not json", JSON.stringify({ hello: 1 }), JSON.stringify({ receipt: 5 })]) {
      const res = await verify(body)
      expect(res.status).toBe(400)
      expect((await res.json()).error.code).toBe("invalid_payload")
    }
  })

  it("verifies a client v3 attestation against its embedded key", async () => {
    const bodyBytes = new TextEncoder().encode("{\"model\":\"local-chat\"}")
    const attestation = await buildAttestation({
      route: "chat.completions",
      bodyBytes,
      detectorsFired: {},
      engine: { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) },
      keyPair: await generateSigningKeyPair()
    })
    expect((await verify({ receipt: attestation })).status).toBe(200)
    expect((await verify({ ...attestation, jti: "f".repeat(32) })).status).toBe(422)
  })
})

describe("GET /api/v1/receipts/{jti} and GET /api/v1/receipts", () => {
  it("returns the stored v1 to a portal token of the organisation only", async () => {
    const { apiKey, orgId } = await selfServiceKey()
    const other = await newOrg(gw)
    const sealed = await seal(gw, sealInput(orgId))
    const token = await portalToken(gw, orgId)
    const ok = await get(`/api/v1/receipts/${sealed.jti}`, token)
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual(sealed.v1)
    for (const auth of [apiKey, undefined]) {
      const res = await get(`/api/v1/receipts/${sealed.jti}`, auth)
      expect(res.status).toBe(401)
      expect((await res.json()).error.code).toBe("auth_required")
    }
    const foreign = await get(`/api/v1/receipts/${sealed.jti}`, await portalToken(gw, other))
    expect(foreign.status).toBe(404)
    expect((await get(`/api/v1/receipts/${"e".repeat(32)}`, token)).status).toBe(404)
  })

  it("lists newest first with cursor pagination and model / time filters", async () => {
    const orgId = await newOrg(gw)
    const token = await portalToken(gw, orgId)
    const sealed = []
    for (let i = 0; i < 5; i++) sealed.push(await seal(gw, sealInput(orgId, { model: i % 2 === 0 ? "local-chat" : "local-embed" })))
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const res: Response = await get(`/api/v1/receipts?limit=2${cursor ? `&cursor=${cursor}` : ""}`, token)
      expect(res.status).toBe(200)
      const page = await res.json()
      expect(page.receipts.length).toBeLessThanOrEqual(2)
      seen.push(...page.receipts.map((r: any) => r.jti))
      cursor = page.next_cursor
    } while (cursor !== null)
    expect(seen).toEqual(sealed.map((s) => s.jti).reverse())
    const embeds = await (await get("/api/v1/receipts?model=local-embed", token)).json()
    expect(embeds.receipts.map((r: any) => r.jti)).toEqual([sealed[3]!.jti, sealed[1]!.jti])
    const future = await (await get(`/api/v1/receipts?from=${new Date(Date.now() + 3_600_000).toISOString()}`, token)).json()
    expect(future.receipts).toEqual([])
    const past = await (await get(`/api/v1/receipts?to=${new Date(Date.now() + 3_600_000).toISOString()}&limit=200`, token)).json()
    expect(past.receipts).toHaveLength(5)
    expect((await get("/api/v1/receipts?from=yesterday", token)).status).toBe(400)
    expect((await get("/api/v1/receipts?cursor=garbage", token)).status).toBe(400)
    expect((await get("/api/v1/receipts")).status).toBe(401)
  })
})

describe("POST /api/v1/receipts/countersign", () => {
  it("countersigns a valid attestation, as relayed when the organisation relayed that call, verifiable with the JWKS", async () => {
    const { apiKey, orgId } = await selfServiceKey()
    const bodyBytes = new TextEncoder().encode("{\"model\":\"local-chat\",\"messages\":[]}")
    const hash = await jsonBodySha256Hex(bodyBytes)
    const attestation = await buildAttestation({
      route: "chat.completions",
      bodyBytes,
      detectorsFired: { EMAIL: 1 },
      engine: { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) },
      keyPair: await generateSigningKeyPair()
    })
    const sealed = await seal(gw, sealInput(orgId, { hashUpstreamRequest: hash }))
    const request = { attestation, provider: "local", model: "local-chat", hash_upstream_request: hash, hash_upstream_response: sealed.v2.hash_upstream_response }
    const res = await post("/api/v1/receipts/countersign", request, { authorization: `Bearer ${apiKey}` })
    expect(res.status).toBe(200)
    const cs = await res.json()
    expect(cs).toMatchObject({ v: "v3-countersignature", witness: "relayed", receipt_jti: sealed.jti, attestation_jti: attestation.jti })
    expect(await independentlyVerify(cs, await fetchJwks(gw.url))).toBe(true)

    const asserted = await (await post("/api/v1/receipts/countersign", { ...request, attestation: encodeEnvelopeHeader(attestation), hash_upstream_response: "9".repeat(64) }, { authorization: `Bearer ${apiKey}` })).json()
    expect(asserted).toMatchObject({ witness: "asserted", receipt_jti: null })

    expect((await post("/api/v1/receipts/countersign", request)).status).toBe(401)
    const forged = await post("/api/v1/receipts/countersign", { ...request, attestation: { ...attestation, iat: attestation.iat + 1 } }, { authorization: `Bearer ${apiKey}` })
    expect(forged.status).toBe(422)
    expect((await forged.json()).error.code).toBe("attestation_invalid")
    const mismatch = await post("/api/v1/receipts/countersign", { ...request, hash_upstream_request: "8".repeat(64) }, { authorization: `Bearer ${apiKey}` })
    expect(mismatch.status).toBe(422)
    expect((await mismatch.json()).error.code).toBe("attestation_mismatch")
    expect((await post("/api/v1/receipts/countersign", { ...request, attestation: { v: "v3" } }, { authorization: `Bearer ${apiKey}` })).status).toBe(400)
  })
})

describe("transparency log", () => {
  it("proves inclusion of sealed receipts under a signed tree head", async () => {
    const orgId = await newOrg(gw)
    const sealed = [await seal(gw, sealInput(orgId)), await seal(gw, sealInput(orgId)), await seal(gw, sealInput(orgId))]
    const sth = await (await get("/api/v1/transparency/sth")).json()
    expect(sth).toMatchObject({ v: "transparency-sth-v1", alg: "ES256" })
    expect(sth.tree_size).toBeGreaterThanOrEqual(3)
    const jwks = await fetchJwks(gw.url)
    expect(await independentlyVerify(sth, jwks)).toBe(true)
    for (const s of sealed) {
      const res = await get(`/api/v1/transparency/proof/${s.jti}`)
      expect(res.status).toBe(200)
      const proof = await res.json()
      expect(proof.receipt_hash).toBe(independentHash(s.v2))
      expect(await independentlyVerify(proof.sth, jwks)).toBe(true)
      expect(proof.sth.tree_size).toBe(proof.tree_size)
      const ok = await verifyInclusion({
        leafHash: hexToBytes(proof.leaf_hash),
        index: proof.leaf_index,
        treeSize: proof.tree_size,
        auditPath: proof.audit_path.map(hexToBytes),
        rootHash: hexToBytes(proof.sth.root_hash)
      })
      expect(ok).toBe(true)
    }
    expect((await get(`/api/v1/transparency/proof/${"0".repeat(32)}`)).status).toBe(404)
  })
})
