import { Context, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import type { SqlClient } from "effect/sql"
import * as jose from "jose"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gatewayServicesLayer } from "../../../layers/GatewayLive.ts"
import { ReceiptKeysPg } from "../../../layers/pg/ReceiptKeys.ts"
import { ReceiptSealerPg } from "../../../layers/pg/ReceiptSealer.ts"
import { AppConfig } from "../../../services/AppConfig.ts"
import type { KeyEncryption } from "../../../services/KeyEncryption.ts"
import type { Outbox } from "../../../services/Outbox.ts"
import { ReceiptKeys } from "../../../services/ReceiptKeys.ts"
import { ReceiptSealer } from "../../../services/ReceiptSealer.ts"
import { TransparencyLog } from "../../../services/TransparencyLog.ts"
import { verifyReceipt } from "../../../sdks/typescript/src/verify/index.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fetchJwks, independentHash, independentlyVerify, newOrg, sealInput } from "../../support/receipts.ts"
import { api, orgWithToken, startReceiver, waitFor } from "../webhookTestKit.ts"

/**
 * Scheduled and on-demand rotation of the receipt signing key across several gateway processes (issue 42). With
 * DATABASE_URL each process is a separate runtime with its own connection pool, key cache, sealer and schedule
 * fiber (a gateway process in all but the OS process; test/programs/receiptKeyRotation.test.ts runs real ones);
 * embedded, PGlite is single-process, so each is its own key service, sealer and schedule fiber over the one
 * database.
 */

interface Node {
  readonly sealer: ReceiptSealer["Service"]
  readonly keys: ReceiptKeys["Service"]
  readonly run: <A>(effect: Effect.Effect<A, unknown, any>) => Promise<A>
  readonly dispose: () => Promise<void>
}

const gatewayNode = (gw: TestGateway): Promise<Node> =>
  gw.runtime.runPromise(Effect.gen(function*() {
    return {
      sealer: yield* ReceiptSealer,
      keys: yield* ReceiptKeys,
      run: <A>(effect: Effect.Effect<A, unknown, any>) => gw.runtime.runPromise(effect),
      dispose: async () => {}
    }
  }) as Effect.Effect<Node, never, any>)

/** Another gateway process on the same database, with `env` on top of the gateway's settings. */
const startNode = async (gw: TestGateway, env: Record<string, string>): Promise<Node> => {
  if (gw.storage.mode.sql === "postgres") {
    const runtime = ManagedRuntime.make(gatewayServicesLayer({ ...gw.env, WEBHOOK_DISPATCHER: "off", ...env }) as Layer.Layer<any, any, never>)
    const services = await runtime.runPromise(Effect.all({ sealer: Effect.service(ReceiptSealer), keys: Effect.service(ReceiptKeys) }) as Effect.Effect<any, never, any>)
    return { ...services, run: (effect) => runtime.runPromise(effect), dispose: () => runtime.dispose() }
  }
  const scope = await Effect.runPromise(Scope.make())
  const context = await gw.runtime.runPromise(Effect.gen(function*() {
    const base = yield* Effect.context<SqlClient.SqlClient | KeyEncryption | Outbox>()
    const layer = Layer.fresh(ReceiptSealerPg).pipe(
      Layer.provideMerge(Layer.fresh(ReceiptKeysPg)),
      Layer.provide(AppConfig.fromEnv({ ...gw.env, ...env })),
      Layer.provide(Layer.succeedContext(base))
    )
    return yield* Layer.buildWithScope(layer, scope)
  }) as Effect.Effect<Context.Context<ReceiptSealer | ReceiptKeys>, never, any>)
  return {
    sealer: Context.get(context, ReceiptSealer),
    keys: Context.get(context, ReceiptKeys),
    run: (effect) => gw.runtime.runPromise(effect),
    dispose: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

interface KeyRow {
  kid: string
  is_current: boolean
  rotation_trigger: string
  private_key_enc: string | null
  activated_ms: string
  retired_ms: string | null
  period_ms: string | null
}
const keyRows = (gw: TestGateway) =>
  gw.query<KeyRow>(`
    SELECT kid, is_current, rotation_trigger, private_key_enc,
      (extract(epoch from activated_at) * 1000)::float8::text AS activated_ms,
      (extract(epoch from retired_at) * 1000)::float8::text AS retired_ms,
      (extract(epoch from period_start) * 1000)::float8::text AS period_ms
    FROM receipt_signing_keys ORDER BY activated_at`)

const newKekFile = () => {
  const dir = mkdtempSync(join(tmpdir(), "receipt-rotation-kek-"))
  writeFileSync(join(dir, "kek"), Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"), { mode: 0o600 })
  return { file: join(dir, "kek"), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The receipt was committed while its key was current: signed after the key became current, before it retired. */
const expectSignedWhileCurrent = (receipt: { kid: string; timestamp: string }, keys: ReadonlyArray<KeyRow>) => {
  const key = keys.find((k) => k.kid === receipt.kid)
  expect(key, `receipt kid ${receipt.kid} is a stored key`).toBeDefined()
  const signedAt = Date.parse(receipt.timestamp)
  // timestamp has millisecond precision, activated_at microseconds: allow the truncation.
  expect(signedAt, `signed at ${receipt.timestamp}, key activated at ${key!.activated_ms}`).toBeGreaterThanOrEqual(Number(key!.activated_ms) - 1)
  if (key!.retired_ms !== null) {
    expect(signedAt, `signed at ${receipt.timestamp}, key ${key!.kid} retired at ${key!.retired_ms}`).toBeLessThanOrEqual(Number(key!.retired_ms))
  }
}

describe("on-demand rotation seen by every process", () => {
  let gw: TestGateway
  let kek: { file: string; remove: () => void }
  let a: Node
  let b: Node
  beforeAll(async () => {
    kek = newKekFile()
    gw = await startTestGateway({
      KEK_FILE: kek.file,
      RECEIPT_CHAIN_VERIFY_MS: "0",
      TRANSPARENCY_SEQUENCE_MS: "0",
      RECEIPT_KEY_ROTATION: "off",
      // No background refresh during the test: a process learns of another's rotation only when a write is refused.
      RECEIPT_KEYS_REFRESH_MS: "600000",
      WEBHOOK_ALLOW_LOOPBACK: "1",
      WEBHOOK_POLL_MS: "50"
    })
    a = await gatewayNode(gw)
    b = await startNode(gw, {})
  })
  afterAll(async () => {
    await b?.dispose()
    await gw?.close()
    kek?.remove()
  })

  it("a process still holding the retired key re-signs its receipts with the new one: none is written signed by a retired key", async () => {
    const orgId = await newOrg(gw)
    const k0 = (await b.run(b.keys.current)).kid
    const first = await b.run(b.sealer.seal(sealInput(orgId)))
    expect(first.v2.kid).toBe(k0)

    const rotation = await a.run(a.keys.rotate)
    expect(rotation).toMatchObject({ previous_kid: k0, trigger: "manual", period: null })
    expect(rotation.kid).not.toBe(k0)
    // b has not heard of it: its cache still holds k0, which is retired now
    expect((await b.run(b.keys.current)).kid).toBe(k0)

    const second = await b.run(b.sealer.seal(sealInput(orgId)))
    expect(second.v2.kid).toBe(rotation.kid)
    expect(second.v1.kid).toBe(rotation.kid)
    expect(second.v2.chain).toEqual({ chain_id: `receipt-v2-org-${orgId}`, seq: 2, prev_hash: independentHash(first.v2) })
    expect((await b.run(b.keys.current)).kid).toBe(rotation.kid)

    // a failed-call receipt and a batch of several receipts, after another rotation made elsewhere
    const again = await b.run(b.keys.rotate)
    const [failed, ...sealed] = await Promise.all([
      a.run(a.sealer.sealFailed({ orgId, keyId: "k", requestId: crypto.randomUUID(), status: 429, errorCode: "rate_limited" })),
      ...Array.from({ length: 5 }, () => a.run(a.sealer.seal(sealInput(orgId))))
    ])
    expect(failed!.kid).toBe(again.kid)
    for (const s of sealed) expect((s as typeof first).v2.kid).toBe(again.kid)

    const keys = await keyRows(gw)
    for (const r of [first.v2, second.v2, failed!, ...sealed.map((s) => (s as typeof first).v2)]) expectSignedWhileCurrent(r as any, keys)
    // every receipt verifies offline with the published keys, old ones included
    const jwks = await fetchJwks(gw.url)
    for (const r of [first.v2, first.v1, second.v2, failed!]) expect(await independentlyVerify(r as any, jwks)).toBe(true)
  })

  it("retires with the private part erased; the JWKS keeps every public key, current first; the PEM names the current one", async () => {
    const rotation = await b.run(b.keys.rotate)
    const keys = await keyRows(gw)
    expect(keys.filter((k) => k.is_current).map((k) => k.kid)).toEqual([rotation.kid])
    for (const k of keys) {
      if (k.is_current) expect(k.private_key_enc).toMatch(/^aead1\./)
      else expect(k.private_key_enc, `retired ${k.kid}`).toBeNull()
    }
    const jwks = await fetchJwks(gw.url)
    expect(jwks.keys[0]!.kid).toBe(rotation.kid)
    expect(new Set(jwks.keys.map((k) => k.kid))).toEqual(new Set(keys.map((k) => k.kid)))
    // the PEM route answers the stored current key, though this process (a) never heard of the rotation
    expect((await a.run(a.keys.current)).kid).not.toBe(rotation.kid)
    const pem = await fetch(`${gw.url}/api/.well-known/service-receipt-pubkey.pem`)
    expect(pem.headers.get("x-service-receipt-kid")).toBe(rotation.kid)
    expect(pem.headers.get("cache-control")).toBe("public, max-age=300")
    const fromPem = await jose.exportJWK(await jose.importSPKI(await pem.text(), "ES256", { extractable: true }))
    expect({ x: fromPem.x, y: fromPem.y }).toEqual({ x: jwks.keys[0]!.x, y: jwks.keys[0]!.y })
  })

  it("signed tree heads and countersignatures use the key current when they are signed, not a cached retired one", async () => {
    const rotation = await b.run(b.keys.rotate)
    expect((await a.run(a.keys.current)).kid).not.toBe(rotation.kid)
    const head = await a.run(Effect.flatMap(Effect.service(TransparencyLog), (log) => log.treeHead) as Effect.Effect<any, never, any>)
    expect(head.kid).toBe(rotation.kid)
    expect(await a.run(a.keys.withCurrent((key) => Effect.succeed(key.kid)))).toBe(rotation.kid)
  })

  it("key.rotated is delivered to subscribed endpoints only, with the kids and never key material", async () => {
    const receiver = await startReceiver()
    try {
      const subscribed = await orgWithToken(gw, ["webhooks.manage"])
      const namespace = await orgWithToken(gw, ["webhooks.manage"])
      const other = await orgWithToken(gw, ["webhooks.manage"])
      for (const [org, events] of [[subscribed, ["key.rotated"]], [namespace, ["key.*"]], [other, ["receipt.signed"]]] as const) {
        expect((await api(gw, org.token, "POST", "/api/v1/webhooks/endpoints", { url: `${receiver.url}/${org.orgId}`, events })).status).toBe(201)
      }
      const rotation = await a.run(a.keys.rotate)
      const deliveries = await waitFor(() => {
        const got = receiver.received.filter((d) => d.body.event === "key.rotated" && d.body.data.kid === rotation.kid)
        return got.length >= 2 && got
      }, 15_000, "key.rotated deliveries")
      const events = await gw.query<{ org_id: string; id: string }>(
        "SELECT org_id, id FROM outbox_events WHERE event = 'key.rotated' AND data->>'kid' = $1", rotation.kid)
      expect(new Set(events.map((e) => e.org_id))).toEqual(new Set([subscribed.orgId, namespace.orgId]))
      expect(new Set(events.map((e) => e.id)).size).toBe(2)
      for (const d of deliveries) {
        expect(d.body.data).toEqual({
          key_type: "receipt_signing",
          kid: rotation.kid,
          previous_kid: rotation.previous_kid,
          trigger: "manual",
          period: null,
          activated_at: rotation.activated_at,
          jwks_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/\.well-known\/service-receipt-pubkeys\.jwks$/)
        })
        expect(d.rawBody).not.toMatch(/"d"|private/)
      }
      await new Promise((r) => setTimeout(r, 300))
      expect(receiver.received.filter((d) => d.headers["x-service-webhook-event"] === "key.rotated" && d.body.data.kid === rotation.kid)).toHaveLength(2)
    } finally {
      await receiver.close()
    }
  })
})

describe("scheduled rotation on a compressed schedule (2 s periods), three processes sealing all the time", () => {
  const PERIOD_MS = 2000
  let gw: TestGateway
  let kek: { file: string; remove: () => void }
  let nodes: Array<Node>
  beforeAll(async () => {
    kek = newKekFile()
    gw = await startTestGateway({
      KEK_FILE: kek.file,
      RECEIPT_CHAIN_VERIFY_MS: "0",
      TRANSPARENCY_SEQUENCE_MS: "0",
      RECEIPT_KEY_ROTATION: "2s",
      RECEIPT_KEYS_REFRESH_MS: "600000",
      WEBHOOK_DISPATCHER: "off"
    })
    nodes = [await gatewayNode(gw), await startNode(gw, {}), await startNode(gw, {})]
  })
  afterAll(async () => {
    for (const node of nodes ?? []) await node.dispose()
    await gw?.close()
    kek?.remove()
  })

  it("makes at most one key per period (in order, at most one period missed), never commits a receipt signed by a retired key, and every receipt still verifies", async () => {
    const orgs = [await newOrg(gw), await newOrg(gw)]
    const { orgId: watcher } = await orgWithToken(gw, ["webhooks.manage"])
    await gw.query(`INSERT INTO webhook_endpoints (org_id, url, events, secret_envelope) VALUES ($1, 'https://example.invalid/', '["key.*"]', 'unused')`, watcher)
    // The schedule runs from the gateway's start: a rotation that began before this subscription committed may have no
    // event for it; every rotation activated after this instant must have one.
    const subscribedMs = Date.now()
    const deadline = Date.now() + 4 * PERIOD_MS + 500
    const v2: Array<any> = []
    const v1: Array<any> = []
    const failed: Array<any> = []
    let manual: { kid: string; previous_kid: string | null } | undefined
    const worker = async (node: Node, n: number) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const orgId = orgs[(n + i) % orgs.length]!
        if (i % 7 === 3) {
          failed.push(await node.run(node.sealer.sealFailed({ orgId, keyId: "k", requestId: crypto.randomUUID(), status: 402, errorCode: "insufficient_balance" })))
        } else {
          const sealed = await node.run(node.sealer.seal(sealInput(orgId)))
          v2.push(sealed.v2)
          v1.push(sealed.v1)
        }
      }
    }
    const onDemand = async () => {
      await new Promise((r) => setTimeout(r, PERIOD_MS * 1.6))
      manual = await nodes[2]!.run(nodes[2]!.keys.rotate)
    }
    await Promise.all([onDemand(), ...nodes.flatMap((node, i) => [worker(node, i), worker(node, i + 1)])])
    expect(v2.length).toBeGreaterThan(30)

    // The schedule goes on while this checks: keys and events are read in one statement (one snapshot).
    const [snapshot] = await gw.query<{ keys: Array<KeyRow>; events: Array<{ data: any }> | null }>(`
      SELECT
        (SELECT json_agg(k ORDER BY k.activated_ms::float8) FROM (
          SELECT kid, is_current, rotation_trigger, private_key_enc,
            (extract(epoch from activated_at) * 1000)::float8::text AS activated_ms,
            (extract(epoch from retired_at) * 1000)::float8::text AS retired_ms,
            (extract(epoch from period_start) * 1000)::float8::text AS period_ms
          FROM receipt_signing_keys) k) AS keys,
        (SELECT json_agg(json_build_object('data', e.data) ORDER BY e.data->>'activated_at')
          FROM outbox_events e WHERE e.event = 'key.rotated' AND e.org_id = $1) AS events`, watcher)
    const keys = typeof snapshot!.keys === "string" ? JSON.parse(snapshot!.keys) as Array<KeyRow> : snapshot!.keys
    const events = (typeof snapshot!.events === "string" ? JSON.parse(snapshot!.events) : snapshot!.events) ?? []
    const scheduled = keys.filter((k) => k.rotation_trigger === "schedule")
    // at most one key per period, each made in its own period, in order. A period can pass with no key when every
    // process was stalled through it (seen at load 5 on 2 cores: the 2 s periods of this test, all three "processes"
    // in one event loop busy sealing); with real periods (days) that does not happen, and a key is never made for a
    // period already over. So: no period doubled, never out of order, and most periods covered.
    expect(scheduled.length).toBeGreaterThanOrEqual(3)
    const periods = scheduled.map((k) => Number(k.period_ms))
    expect(new Set(periods).size).toBe(periods.length)
    const span = (periods.at(-1)! - periods[0]!) / PERIOD_MS + 1
    expect(periods.length).toBeGreaterThanOrEqual(span - 1)
    periods.forEach((p, i) => {
      expect(p % PERIOD_MS).toBe(0)
      if (i > 0) expect(p - periods[i - 1]!).toBeGreaterThanOrEqual(PERIOD_MS)
      expect(Number(scheduled[i]!.activated_ms)).toBeGreaterThanOrEqual(p)
      expect(Number(scheduled[i]!.activated_ms)).toBeLessThan(p + PERIOD_MS)
    })
    expect(keys.filter((k) => k.is_current)).toHaveLength(1)
    expect(keys.find((k) => k.kid === manual!.kid)).toMatchObject({ rotation_trigger: "manual", period_ms: null })

    // every receipt was committed while its key was current; v1 and v2 of one call share the key
    for (const r of [...v2, ...failed]) expectSignedWhileCurrent(r, keys)
    v2.forEach((r, i) => expect(v1[i].kid).toBe(r.kid))
    expect(new Set(v2.map((r) => r.kid)).size).toBeGreaterThanOrEqual(3)

    // all of them verify offline against the JWKS as published now, and the chains are intact
    const jwks = await fetchJwks(gw.url)
    for (const r of [...v2, ...v1, ...failed]) expect((await verifyReceipt(r, { jwks: jwks as any, nowSeconds: Math.floor(Date.now() / 1000) })).valid).toBe(true)
    for (const orgId of orgs) {
      const rows = await gw.query<{ envelope: any }>("SELECT envelope FROM receipts_v2 WHERE chain_id = $1 ORDER BY seq", `receipt-v2-org-${orgId}`)
      rows.forEach((row, i) => {
        expect(row.envelope.chain.seq).toBe(i + 1)
        if (i > 0) expect(row.envelope.chain.prev_hash).toBe(independentHash(rows[i - 1]!.envelope))
      })
    }

    // one key.rotated per rotation for the subscribed organisation, in order, each naming the key it replaced
    const allRotated = keys.filter((k) => k.rotation_trigger === "schedule" || k.rotation_trigger === "manual")
    const eventKids = events.map((e: { data: any }) => e.data.kid)
    const rotated = allRotated.filter((k) => eventKids.includes(k.kid))
    expect(eventKids).toEqual(rotated.map((k) => k.kid))
    for (const k of allRotated) if (Number(k.activated_ms) > subscribedMs) expect(eventKids).toContain(k.kid)
    expect(rotated.length).toBeGreaterThanOrEqual(3)
    events.forEach((e: { data: any }, i: number) => {
      expect(e.data.previous_kid).toBe(keys[keys.findIndex((k) => k.kid === e.data.kid) - 1]!.kid)
      expect(e.data.trigger).toBe(rotated[i]!.rotation_trigger)
      if (e.data.trigger === "schedule") expect(e.data.period).toBe(new Date(Number(rotated[i]!.period_ms)).toISOString())
    })

    // the status every operator sees
    const status = await nodes[1]!.run(nodes[1]!.keys.status)
    expect(status.schedule).toBe("2s")
    expect(Date.parse(status.next_rotation_at!) % PERIOD_MS).toBe(0)
    expect(status.keys[0]).toMatchObject({ status: "current" })
    expect(status.keys.map((k) => k.kid)).toEqual(expect.arrayContaining(keys.map((k) => k.kid)))
  }, 60_000)
})
