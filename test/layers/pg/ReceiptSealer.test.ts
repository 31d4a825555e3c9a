import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gatewayServicesLayer } from "../../../layers/GatewayLive.ts"
import { ReceiptSealerPg } from "../../../layers/pg/ReceiptSealer.ts"
import { ChainVerifier } from "../../../services/ChainVerifier.ts"
import { Outbox } from "../../../services/Outbox.ts"
import { ReceiptKeys } from "../../../services/ReceiptKeys.ts"
import { ReceiptSealer } from "../../../services/ReceiptSealer.ts"
import { AppConfig } from "../../../services/AppConfig.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fetchJwks, independentHash, independentlyVerify, newOrg, seal, sealInput } from "../../support/receipts.ts"

let gw: TestGateway
let kekDir: string
beforeAll(async () => {
  // A shared KEK file: the two-process test starts a second runtime on the same database, which must be able to
  // open the stored signing key (exactly what two real gateway nodes need).
  kekDir = mkdtempSync(join(tmpdir(), "receipts-kek-"))
  writeFileSync(join(kekDir, "kek"), Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"), { mode: 0o600 })
  gw = await startTestGateway({ KEK_FILE: join(kekDir, "kek"), RECEIPT_CHAIN_VERIFY_MS: "0", TRANSPARENCY_SEQUENCE_MS: "0" })
})
afterAll(async () => {
  await gw.close()
  rmSync(kekDir, { recursive: true, force: true })
})

const chainSeqs = (table: string, chainId: string) =>
  gw.query<{ seq: string; envelope: any }>(`SELECT seq::text AS seq, envelope FROM ${table} t WHERE chain_id = $1 ORDER BY t.seq`, chainId)

/** seq 1..n without gaps and every prev_hash the hash of the receipt before (genesis for seq 1). */
const expectIntactChain = (rows: ReadonlyArray<{ seq: string; envelope: any }>, n: number) => {
  expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: n }, (_, i) => i + 1))
  rows.forEach((row, i) => {
    expect(row.envelope.chain.seq).toBe(i + 1)
    expect(row.envelope.chain.prev_hash).toBe(i === 0 ? "0".repeat(64) : independentHash(rows[i - 1]!.envelope))
  })
}

describe("ReceiptSealer.seal", () => {
  it("seals a v2 and a v1 receipt with one jti, both verifiable by an independent verifier with the published JWKS", async () => {
    const orgId = await newOrg(gw)
    const input = sealInput(orgId, {
      routingDecision: { from: "openai", to: "local", chosen_model: "local-chat", classifier: "rules", savings_pct: 40, strategy: "cost" }
    })
    const sealed = await seal(gw, input)
    expect(sealed.jti).toMatch(/^[0-9a-f]{32}$/)
    expect(sealed.v2.jti).toBe(sealed.jti)
    expect(sealed.v1.jti).toBe(sealed.jti)
    expect(sealed.v2).toMatchObject({
      v: 2,
      alg: "ES256",
      iss: gw.env.PUBLIC_BASE_URL ?? expect.any(String),
      request_id: input.providerResponseId,
      provider: "local",
      model: "local-chat",
      input_tokens: 12,
      output_tokens: 34,
      hash_upstream_request: input.hashUpstreamRequest,
      hash_upstream_response: input.hashUpstreamResponse,
      chain: { chain_id: `receipt-v2-org-${orgId}`, seq: 1, prev_hash: "0".repeat(64) },
      extensions: { request_id: input.requestId },
      routing_decision: { from: "openai", to: "local", chosen_model: "local-chat", classifier: "rules", savings_pct: 40, strategy: "cost" }
    })
    expect(sealed.v2.signature).toBe(sealed.v2.sig)
    expect(sealed.v2.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(sealed.v1).toMatchObject({
      v: "v1",
      alg: "ecdsa-p256-sha256",
      sub: "svc_testkey",
      chain: { chain_id: `tenant-acct_${orgId}`, seq: 1, prev_hash: "0".repeat(64) },
      claims: {
        capability: "chat.completions",
        tokens_in: 12,
        tokens_out: 34,
        routing_decision: { from: "openai", to: "local", chosen_model: "local-chat", strategy: "cost", classifier: "rules" },
        tokenisation_mode: "client",
        engine_version: "relay-ts/0.1.0"
      }
    })
    const jwks = await fetchJwks(gw.url)
    expect(await independentlyVerify(sealed.v2 as any, jwks)).toBe(true)
    expect(await independentlyVerify(sealed.v1 as any, jwks)).toBe(true)
    expect(await independentlyVerify({ ...sealed.v2, output_tokens: 35 } as any, jwks)).toBe(false)

    const [v2Row] = await gw.query<{ envelope: unknown }>("SELECT envelope FROM receipts_v2 WHERE jti = $1", sealed.jti)
    const [v1Row] = await gw.query<{ envelope: unknown }>("SELECT envelope FROM receipts_v1 WHERE jti = $1", sealed.jti)
    expect(v2Row!.envelope).toEqual(sealed.v2)
    expect(v1Row!.envelope).toEqual(sealed.v1)
    const events = await gw.query<{ event: string; data: any }>("SELECT event, data FROM outbox_events WHERE org_id = $1", orgId)
    expect(events).toEqual([expect.objectContaining({ event: "receipt.signed", data: expect.objectContaining({ jti: sealed.jti, seq: 1 }) })])
  })

  it("rolls back with the caller's transaction: nothing of a sealed receipt survives when the caller fails", async () => {
    const orgId = await newOrg(gw)
    const exit = await gw.runtime.runPromiseExit(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sealer = yield* ReceiptSealer
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sealer.seal(sealInput(orgId))
        return yield* Effect.fail("debit failed")
      }))
    }))
    expect(exit._tag).toBe("Failure")
    expect(await gw.query("SELECT jti FROM receipts_v2 WHERE org_id = $1", orgId)).toEqual([])
    expect(await gw.query("SELECT jti FROM receipts_v1 WHERE org_id = $1", orgId)).toEqual([])
    expect(await gw.query("SELECT id FROM outbox_events WHERE org_id = $1", orgId)).toEqual([])
    // and the chain continues at seq 1 afterwards
    expect((await seal(gw, sealInput(orgId))).v2.chain.seq).toBe(1)
  })

  it("gives 200 concurrent seals of one tenant seq 1..200 with no gap in both chains, every prev_hash linking", async () => {
    const orgId = await newOrg(gw)
    const results = await Promise.all(Array.from({ length: 200 }, () => seal(gw, sealInput(orgId))))
    expect(new Set(results.map((r) => r.jti)).size).toBe(200)
    expectIntactChain(await chainSeqs("receipts_v2", `receipt-v2-org-${orgId}`), 200)
    expectIntactChain(await chainSeqs("receipts_v1", `tenant-acct_${orgId}`), 200)
  })

  it("never forks a chain when two independent sealers (two processes on Postgres) seal 1,000 receipts for one tenant at once", async () => {
    const orgId = await newOrg(gw)
    const perSide = 500 // 1,000 calls in all, as the acceptance criterion asks
    let second: { seal: (n: number) => Promise<unknown>; dispose: () => Promise<void> }
    if (gw.storage.mode.sql === "postgres") {
      // A second gateway process in all but the OS process: its own runtime, connection pool, keys cache and
      // per-tenant serialiser, on the same database.
      const runtime = ManagedRuntime.make(gatewayServicesLayer({ ...gw.env, WEBHOOK_DISPATCHER: "off" }) as Layer.Layer<any, any, never>)
      second = {
        seal: () => runtime.runPromise(Effect.flatMap(Effect.service(ReceiptSealer), (s) => s.seal(sealInput(orgId)))),
        dispose: () => runtime.dispose()
      }
    } else {
      // PGlite is single-process: a second, independent sealer layer (own serialiser; fresh, or the runtime's memo map
      // hands back the first one) over the same SqlClient.
      const scope = await gw.runtime.runPromise(Effect.gen(function*() {
        const context = yield* Effect.context<SqlClient.SqlClient | ReceiptKeys | Outbox | AppConfig>()
        const built = yield* Layer.buildWithScope(Layer.fresh(ReceiptSealerPg).pipe(Layer.provide(Layer.succeedContext(context))), yield* Effect.scope)
        return Context.get(built, ReceiptSealer)
      }).pipe(Effect.scoped) as Effect.Effect<ReceiptSealer["Service"], never, any>)
      second = { seal: () => gw.runtime.runPromise(scope.seal(sealInput(orgId))), dispose: async () => {} }
    }
    try {
      await Promise.all([
        ...Array.from({ length: perSide }, () => seal(gw, sealInput(orgId))),
        ...Array.from({ length: perSide }, (_, n) => second.seal(n))
      ])
    } finally {
      await second.dispose()
    }
    expectIntactChain(await chainSeqs("receipts_v2", `receipt-v2-org-${orgId}`), perSide * 2)
    expectIntactChain(await chainSeqs("receipts_v1", `tenant-acct_${orgId}`), perSide * 2)
  }, 120_000)
})

describe("ReceiptSealer.sealFailed", () => {
  it("seals failed-call receipts in their own chain, verifiable independently", async () => {
    const orgId = await newOrg(gw)
    const first = await gw.runtime.runPromise(Effect.flatMap(Effect.service(ReceiptSealer), (s) =>
      s.sealFailed({ orgId, keyId: "key_x", requestId: "req-1", status: 402, errorCode: "insufficient_balance", model: "local-chat" })))
    const second = await gw.runtime.runPromise(Effect.flatMap(Effect.service(ReceiptSealer), (s) =>
      s.sealFailed({ orgId, keyId: "key_x", requestId: "req-2", status: 502, errorCode: "upstream_error", provider: "local", model: "local-chat", hashUpstreamRequest: "d".repeat(64) })))
    expect(first).toMatchObject({ v: 2, outcome: "failed", status: 402, error_code: "insufficient_balance", provider: null, chain: { chain_id: `failed-v2-org-${orgId}`, seq: 1 } })
    expect(first).not.toHaveProperty("input_tokens")
    expect(second.chain).toEqual({ chain_id: `failed-v2-org-${orgId}`, seq: 2, prev_hash: independentHash(first) })
    const jwks = await fetchJwks(gw.url)
    expect(await independentlyVerify(first as any, jwks)).toBe(true)
    expect(await independentlyVerify(second as any, jwks)).toBe(true)
    // a failure does not advance the completed-call chain
    expect(await gw.query("SELECT jti FROM receipts_v2 WHERE org_id = $1", orgId)).toEqual([])
  })
})

describe("ChainVerifier", () => {
  const verifyAll = () => gw.runtime.runPromise(Effect.flatMap(Effect.service(ChainVerifier), (v) => v.verifyAll))

  it("reports a tampered stored receipt as a break (chain.broken once) and its restoration as a repair (chain.repaired)", async () => {
    const orgId = await newOrg(gw)
    const sealed = []
    for (let i = 0; i < 3; i++) sealed.push(await seal(gw, sealInput(orgId)))
    const chainId = `receipt-v2-org-${orgId}`
    expect((await verifyAll()).find((v) => v.chain_id === chainId)).toMatchObject({ ok: true, checked: 3 })

    const [original] = await gw.query<{ envelope: any }>("SELECT envelope FROM receipts_v2 WHERE jti = $1", sealed[1]!.jti)
    await gw.query("UPDATE receipts_v2 SET envelope = $1 WHERE jti = $2", JSON.stringify({ ...original!.envelope, output_tokens: 1 }), sealed[1]!.jti)
    const broken = (await verifyAll()).find((v) => v.chain_id === chainId)
    expect(broken).toMatchObject({ ok: false, seq: 2 })
    expect(broken!.reason).toMatch(/^signature: /)
    await verifyAll() // still broken: no second event
    const incidents = await gw.query<{ seq: string; repaired: boolean }>(
      "SELECT seq::text AS seq, repaired_at IS NOT NULL AS repaired FROM chain_incidents WHERE chain_id = $1", chainId)
    expect(incidents).toEqual([{ seq: "2", repaired: false }])
    const brokenEvents = await gw.query<{ data: any }>("SELECT data FROM outbox_events WHERE org_id = $1 AND event = 'chain.broken'", orgId)
    expect(brokenEvents).toHaveLength(1)
    expect(brokenEvents[0]!.data).toMatchObject({ chain_id: chainId, seq: 2 })

    await gw.query("UPDATE receipts_v2 SET envelope = $1 WHERE jti = $2", JSON.stringify(original!.envelope), sealed[1]!.jti)
    expect((await verifyAll()).find((v) => v.chain_id === chainId)).toMatchObject({ ok: true })
    expect(await gw.query("SELECT id FROM chain_incidents WHERE chain_id = $1 AND repaired_at IS NULL", chainId)).toEqual([])
    const repaired = await gw.query<{ data: any }>("SELECT data FROM outbox_events WHERE org_id = $1 AND event = 'chain.repaired'", orgId)
    expect(repaired).toHaveLength(1)
  })

  it("reports a removed receipt and a removed last receipt as breaks", async () => {
    const orgId = await newOrg(gw)
    const sealed = []
    for (let i = 0; i < 3; i++) sealed.push(await seal(gw, sealInput(orgId)))
    await gw.query("DELETE FROM receipts_v1 WHERE jti = $1", sealed[1]!.jti)
    await gw.query("DELETE FROM receipts_v2 WHERE jti = $1", sealed[2]!.jti)
    const verdicts = await verifyAll()
    expect(verdicts.find((v) => v.chain_id === `tenant-acct_${orgId}`)).toMatchObject({ ok: false, seq: 2, reason: "receipt seq 2 is missing" })
    expect(verdicts.find((v) => v.chain_id === `receipt-v2-org-${orgId}`)).toMatchObject({ ok: false, seq: 3 })
  })

  it("runs by itself in the background every RECEIPT_CHAIN_VERIFY_MS", async () => {
    const fast = await startTestGateway({ RECEIPT_CHAIN_VERIFY_MS: "100" })
    try {
      const orgId = await newOrg(fast)
      const sealed = await seal(fast, sealInput(orgId))
      await fast.query("UPDATE receipts_v2 SET envelope = jsonb_set(envelope, '{model}', '\"x\"') WHERE jti = $1", sealed.jti)
      let incidents: ReadonlyArray<unknown> = []
      for (let i = 0; i < 50 && incidents.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100))
        incidents = await fast.query("SELECT id FROM chain_incidents WHERE org_id = $1", orgId)
      }
      expect(incidents).toHaveLength(1)
    } finally {
      await fast.close()
    }
  })
})
