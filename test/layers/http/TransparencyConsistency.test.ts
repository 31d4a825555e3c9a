import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rotateReceiptKeys } from "../../../layers/AdminOperations.ts"
import { createJwksCache, verifyConsistencyProof } from "../../../sdks/typescript/src/verify/index.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { newOrg, seal, sealInput } from "../../support/receipts.ts"

/**
 * GET /api/v1/transparency/consistency (issue 42): the RFC 9162 proof that the log a client saw (a signed tree head it
 * kept) is a prefix of the log now, verified offline by the SDK, across a key rotation; every bad size refused with a
 * stable code.
 */
let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway({ RECEIPT_CHAIN_VERIFY_MS: "0", TRANSPARENCY_SEQUENCE_MS: "0", RECEIPT_KEY_ROTATION: "off" })
})
afterAll(() => gw.close())

const get = async (path: string) => {
  const res = await fetch(`${gw.url}${path}`)
  return { status: res.status, body: await res.json() }
}
const sealSome = async (n: number) => {
  const orgId = await newOrg(gw)
  for (let i = 0; i < n; i++) await seal(gw, sealInput(orgId))
}
const jwks = () => createJwksCache({ gatewayUrl: gw.url })

describe("GET /api/v1/transparency/consistency", () => {
  it("proves that a kept tree head is a prefix of today's log, also across a key rotation", async () => {
    await sealSome(3)
    const kept = (await get("/api/v1/transparency/sth")).body
    expect(kept.tree_size).toBeGreaterThanOrEqual(3)
    await sealSome(4)
    const rotation = await gw.runtime.runPromise(rotateReceiptKeys as Effect.Effect<{ kid: string }, unknown, any>)
    await sealSome(2)

    const { status, body: proof } = await get(`/api/v1/transparency/consistency?first=${kept.tree_size}`)
    expect(status).toBe(200)
    expect(proof).toMatchObject({ first: kept.tree_size, second: kept.tree_size + 6, sth: { v: "transparency-sth-v1", tree_size: kept.tree_size + 6 } })
    expect(proof.consistency_path.length).toBeGreaterThan(0)
    expect(proof.sth.kid).toBe(rotation.kid)
    expect(kept.kid).not.toBe(rotation.kid)
    const result = await verifyConsistencyProof(proof, kept, { jwks: jwks() })
    expect(result).toMatchObject({ valid: true, reason: null })
    expect(result.checks.map((c) => [c.label, c.status])).toEqual([
      ["old tree head", "ok"], ["new tree head", "ok"], ["proof schema", "ok"], ["consistency", "ok"]
    ])

    // an explicit second size, and equal sizes (an empty path)
    const older = await get(`/api/v1/transparency/consistency?first=1&second=${kept.tree_size}`)
    expect(older.body).toMatchObject({ first: 1, second: kept.tree_size, sth: { tree_size: kept.tree_size, root_hash: kept.root_hash } })
    const same = await get(`/api/v1/transparency/consistency?first=${kept.tree_size}&second=${kept.tree_size}`)
    expect(same.body.consistency_path).toEqual([])
    expect((await verifyConsistencyProof(same.body, kept, { jwks: jwks() })).valid).toBe(true)

    // a kept head changed after it was signed is refused (a well-signed second root is a fork: sdks/vectors/transparency.json)
    const forged = { ...kept, root_hash: older.body.sth.root_hash === kept.root_hash ? "ab".repeat(32) : kept.root_hash }
    expect((await verifyConsistencyProof(proof, forged, { jwks: jwks() })).reason).toMatch(/^old tree head: does not verify/)
  })

  it("refuses bad sizes with stable codes: invalid_request for what is not a size, tree_size_out_of_range for sizes it cannot prove", async () => {
    await sealSome(1)
    const size = (await get("/api/v1/transparency/sth")).body.tree_size as number
    const invalid: Array<[string, string]> = [
      ["", "first"],
      ["?second=2", "first"],
      ["?first=", "first"],
      ["?first=abc", "first"],
      ["?first=-1", "first"],
      ["?first=1.5", "first"],
      ["?first=1e3", "first"],
      ["?first=+2", "first"],
      ["?first=1234567890123456", "first"],
      ["?first=1&second=x", "second"],
      ["?first=1&second=", "second"]
    ]
    for (const [query, path] of invalid) {
      const res = await get(`/api/v1/transparency/consistency${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body.error, query).toMatchObject({ code: "invalid_request", details: { path } })
      expect(res.body.error.message, query).toMatch(new RegExp(`^${path} `))
    }
    const outOfRange: Array<[string, number, number, RegExp]> = [
      ["?first=0", 0, size, /^first must be at least 1/],
      [`?first=0&second=${size}`, 0, size, /^first must be at least 1/],
      [`?first=${size}&second=1`, size, 1, /must not be greater than second/],
      [`?first=1&second=${size + 1}`, 1, size + 1, /is beyond the log's tree size/],
      [`?first=${size + 5}`, size + 5, size, /must not be greater than second/]
    ]
    for (const [query, first, second, message] of outOfRange) {
      const res = await get(`/api/v1/transparency/consistency${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body.error, query).toMatchObject({ code: "tree_size_out_of_range", details: { first, second, tree_size: size } })
      expect(res.body.error.message, query).toMatch(message)
    }
  })
})
