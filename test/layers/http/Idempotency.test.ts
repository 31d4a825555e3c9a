import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { untilProviderReceived } from "../../support/untilProviderReceived.ts"
import { type FakeProvider, startFakeProvider } from "../../../programs/fake-provider.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { startTestGateway, startTestGatewayPair, type TestGateway } from "../../support/gateway.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { AdmissionCounters } from "../../../services/AdmissionCounters.ts"
import { idempotencySlotKey } from "../../../services/Idempotency.ts"
import { Slots } from "../../../services/Slots.ts"

let provider: FakeProvider
let gw: TestGateway
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0, chunkDelayMs: 5 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
})
afterAll(async () => {
  await gw.close()
  await provider.close()
})
beforeEach(() => provider.reset())

const chatBody = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", messages: [{ role: "user", content }], ...extra })

const relay = async (target: TestGateway, apiKey: string, body: string, idempotencyKey?: string) =>
  fetch(`${target.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${apiKey}`,
      "content-type": "application/json",
      ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      ...(await attestedHeaders("chat.completions", body))
    },
    body
  })

/** Until the original has reached the provider (it is in flight, its slot taken), however slow the machine is. */
const untilForwarded = () => untilProviderReceived(provider, 1)

const debits = (g: TestGateway, orgId: string) =>
  g.query("SELECT 1 FROM ledger_entries WHERE org_id = $1 AND kind = 'debit'", orgId).then((r) => r.length)

describe("Idempotency-Key on the relay routes", () => {
  it("replays the stored 2xx response for the same key and body: no upstream call, no new debit, same receipt", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = chatBody("first <EMAIL_1>")
    const first = await relay(gw, apiKey, body, key)
    expect(first.status).toBe(200)
    const firstBody = await first.text()
    const balance = await balanceMicros(gw, orgId)

    // the same body re-serialised with other key order and spacing is the same request
    const reordered = JSON.stringify({ messages: [{ content: "first <EMAIL_1>", role: "user" }], model: "local-chat" }, null, 2)
    const again = await relay(gw, apiKey, reordered, key)
    expect(again.status).toBe(200)
    expect(await again.text()).toBe(firstBody)
    expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    expect(again.headers.get("x-service-receipt-v2-jti")).toBe(first.headers.get("x-service-receipt-v2-jti"))
    expect(again.headers.get("x-service-receipt-v2")).toBe(first.headers.get("x-service-receipt-v2"))
    expect(provider.received).toHaveLength(1)
    expect(await balanceMicros(gw, orgId)).toBe(balance)
    expect(await debits(gw, orgId)).toBe(1)
  })

  it("replays a retry whatever the checks run during its look-up would say: no attestation, an unknown routing strategy", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = chatBody("checked while looked up")
    const first = await relay(gw, apiKey, body, key)
    expect(first.status).toBe(200)
    const firstBody = await first.text()
    const balance = await balanceMicros(gw, orgId)
    const retry = (extra: Record<string, string>) =>
      fetch(`${gw.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": key, ...extra },
        body
      })

    // Each would be refused on a fresh call (403 engine_untrusted; 400 for the routing strategy): a replay needs neither.
    for (const extra of [{}, { ...(await attestedHeaders("chat.completions", body)), "x-service-routing": "no-such-strategy" }]) {
      const again = await retry(extra)
      expect(again.status).toBe(200)
      expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
      expect(await again.text()).toBe(firstBody)
    }
    const fresh = await fetch(`${gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": crypto.randomUUID(), ...(await attestedHeaders("chat.completions", body)), "x-service-routing": "no-such-strategy" },
      body
    })
    expect(fresh.status).toBe(400)
    expect(((await fresh.json()) as { error: { code: string } }).error.code).toBe("invalid_request")
    expect(provider.received).toHaveLength(1)
    expect(await balanceMicros(gw, orgId)).toBe(balance)
    expect(await debits(gw, orgId)).toBe(1)
  })

  it("a replay found only after its admission was taken gives the admission back whole: no hold, no count in the rate windows, no slot", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const body = chatBody("stored under another key")
    const keyRemaining = (res: Response) => Number(/^"key";r=(\d+);/.exec(res.headers.get("ratelimit") ?? "")?.[1])
    const first = await relay(gw, apiKey, body, crypto.randomUUID())
    expect(first.status).toBe(200)
    const firstBody = await first.text()
    const remainingAfterFirst = keyRemaining(first)
    expect(remainingAfterFirst).toBeGreaterThan(2)
    // A stored response this gateway's admission has never marked done (as once the done mark has expired, 2 min after
    // the original): the admission, sent while the look-up is in flight, is taken before the replay is found.
    const key = crypto.randomUUID()
    await gw.query(
      `INSERT INTO idempotency_records (scope, idempotency_key, body_hash, status, headers, body_base64, streamed, created_at, expires_at)
       SELECT scope, $1, body_hash, status, headers, body_base64, streamed, created_at, expires_at FROM idempotency_records WHERE body_base64 = $2`,
      key,
      Buffer.from(firstBody).toString("base64")
    )
    const openHolds = () => gw.runtime.runPromise(Effect.flatMap(Effect.service(AdmissionCounters), (c) => c.openHolds))
    const holdsBefore = await openHolds()

    const again = await relay(gw, apiKey, body, key)
    expect(again.status).toBe(200)
    expect(again.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(await again.text()).toBe(firstBody)
    expect(await openHolds()).toBe(holdsBefore)
    const slot = idempotencySlotKey(`${orgId}|chat.completions`, key)
    expect(await gw.runtime.runPromise(Effect.flatMap(Effect.service(Slots), (s) => s.holder(slot)))).toBeUndefined()
    // The next fresh call is the key's second in the window, not its third.
    const next = await relay(gw, apiKey, body, crypto.randomUUID())
    expect(next.status).toBe(200)
    await next.text()
    expect(keyRemaining(next)).toBe(remainingAfterFirst - 1)
    expect(provider.received).toHaveLength(2)
    expect(await debits(gw, orgId)).toBe(2)
  })

  // Needs a second PostgreSQL session to hold the look-up back (PGlite has one connection).
  it.skipIf(process.env.DATABASE_URL === undefined)("a client gone while its look-up is still out, after its admission was taken: the admission goes back", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const openHolds = () => gw.runtime.runPromise(Effect.flatMap(Effect.service(AdmissionCounters), (c) => c.openHolds))
    const holdsBefore = await openHolds()
    // A transaction that locks the stored responses: the look-up's SELECT waits for it, the admission does not.
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => (locked = resolve))
    let unlock!: () => void
    const unlocked = new Promise<void>((resolve) => (unlock = resolve))
    const lockSession = Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql.unsafe("LOCK TABLE idempotency_records IN ACCESS EXCLUSIVE MODE")
          locked()
          yield* Effect.promise(() => unlocked)
        }))
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(gw.env.DATABASE_URL), maxConnections: 1 })), Effect.scoped)
    )
    try {
      await isLocked
      const key = crypto.randomUUID()
      const body = chatBody("gone while looked up")
      const abort = new AbortController()
      const call = fetch(`${gw.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": key, ...(await attestedHeaders("chat.completions", body)) },
        body,
        signal: abort.signal
      }).catch((e: unknown) => e)
      const slot = idempotencySlotKey(`${orgId}|chat.completions`, key)
      const holder = () => gw.runtime.runPromise(Effect.flatMap(Effect.service(Slots), (s) => s.holder(slot)))
      // The admission has taken the hold and the slot while the look-up waits on the lock.
      const until = async (done: () => Promise<boolean>) => {
        for (const deadline = Date.now() + 20_000; !(await done());) {
          if (Date.now() > deadline) throw new Error("timed out")
          await new Promise((r) => setTimeout(r, 10))
        }
      }
      await until(async () => (await holder()) !== undefined)
      expect(await openHolds()).toBe(holdsBefore + 1)
      abort.abort()
      await call
      // Given back at once (not after the hold's 15 minutes or the slot's 15 s), before the look-up could answer.
      await until(async () => (await holder()) === undefined && (await openHolds()) === holdsBefore)
      expect(provider.received).toHaveLength(0)
    } finally {
      unlock()
      await lockSession
    }
    expect(await debits(gw, orgId)).toBe(0)
  })

  it("answers 409 idempotency_key_conflict for the same key with a different body, forwarding nothing", async () => {
    const { apiKey } = await fundedKey(gw)
    const key = crypto.randomUUID()
    expect((await relay(gw, apiKey, chatBody("one"), key)).status).toBe(200)
    const res = await relay(gw, apiKey, chatBody("two"), key)
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({
      error: { code: "idempotency_key_conflict", message: "This Idempotency-Key was used with a different request body in the last 24 hours." }
    })
    const failed = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-failed")!, "base64").toString())
    expect(failed).toMatchObject({ status: 409, error_code: "idempotency_key_conflict" })
    expect(provider.received).toHaveLength(1)
  })

  it("answers 400 invalid_idempotency_key for a key over 128 characters", async () => {
    const { apiKey } = await fundedKey(gw)
    const res = await relay(gw, apiKey, chatBody("x"), "k".repeat(129))
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      error: { code: "invalid_idempotency_key", message: "Idempotency-Key must be 1 to 128 printable characters (a UUID v4 is recommended)." }
    })
    const failed = JSON.parse(Buffer.from(res.headers.get("x-service-receipt-failed")!, "base64").toString())
    expect(failed).toMatchObject({ status: 400, error_code: "invalid_idempotency_key" })
    expect(provider.received).toHaveLength(0)
    expect((await relay(gw, apiKey, chatBody("x"), "k".repeat(128))).status).toBe(200)
  })

  it("never stores a non-2xx response: a retry after an error is processed afresh", async () => {
    const { apiKey, orgId } = await fundedKey(gw, "0")
    const key = crypto.randomUUID()
    const body = chatBody("retry me")
    expect((await relay(gw, apiKey, body, key)).status).toBe(402)
    await gw.query("UPDATE wallets SET balance_micros = 5000000 WHERE org_id = $1", orgId)
    await gw.query("INSERT INTO ledger_entries (org_id, kind, amount_micros, reference) VALUES ($1, 'adjustment', 5000000, 'test')", orgId)
    const retry = await relay(gw, apiKey, body, key)
    expect(retry.status).toBe(200)
    expect(retry.headers.get("x-service-idempotent-replay")).toBeNull()
    expect(provider.received).toHaveLength(1)
  })

  it("makes a duplicate that arrives in flight wait for the original and get its response (one upstream call)", async () => {
    const { apiKey } = await fundedKey(gw)
    provider.setBehaviour({ kind: "delay", ms: 800 })
    const key = crypto.randomUUID()
    const body = chatBody("slow")
    const original = relay(gw, apiKey, body, key)
    await untilForwarded()
    const duplicate = await relay(gw, apiKey, body, key)
    const first = await original
    expect(first.status).toBe(200)
    expect(duplicate.status).toBe(200)
    expect(await duplicate.text()).toBe(await first.text())
    expect(duplicate.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(provider.received).toHaveLength(1)
  })

  it("answers 409 idempotency_in_flight with Retry-After when the original is still running after 3 s", async () => {
    const { apiKey } = await fundedKey(gw)
    provider.setBehaviour({ kind: "delay", ms: 4500 })
    const key = crypto.randomUUID()
    const body = chatBody("very slow")
    const original = relay(gw, apiKey, body, key)
    await untilForwarded()
    const started = Date.now()
    const duplicate = await relay(gw, apiKey, body, key)
    const waited = Date.now() - started
    expect(duplicate.status).toBe(409)
    expect(await duplicate.json()).toEqual({
      error: { code: "idempotency_in_flight", message: "The original request with this Idempotency-Key is still running; retry shortly to get its response." }
    })
    const failed = JSON.parse(Buffer.from(duplicate.headers.get("x-service-receipt-failed")!, "base64").toString())
    expect(failed).toMatchObject({ status: 409, error_code: "idempotency_in_flight" })
    expect(duplicate.headers.get("retry-after")).toBe("1")
    expect(waited).toBeGreaterThanOrEqual(2900)
    expect((await original).status).toBe(200)
    expect(provider.received).toHaveLength(1)
  }, 20_000)
})

describe("Idempotency-Key on streamed relay calls", () => {
  const streamBody = (content: string) => chatBody(content, { stream: true, stream_options: { include_usage: true } })

  it("replays the recorded transcript byte for byte, trailer included, with X-Service-Streamed", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = streamBody("stream once")
    const first = await relay(gw, apiKey, body, key)
    const original = new Uint8Array(await first.arrayBuffer())
    expect(new TextDecoder().decode(original)).toContain("data: [DONE]\n\n")
    const replayed = await relay(gw, apiKey, body, key)
    expect(replayed.status).toBe(200)
    expect(replayed.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
    expect(replayed.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(replayed.headers.get("x-service-streamed")).toBe("true")
    expect(Buffer.from(await replayed.arrayBuffer()).equals(Buffer.from(original))).toBe(true)
    expect(provider.received).toHaveLength(1)
    expect(await debits(gw, orgId)).toBe(1)
  })

  it("does not store a stream that failed midway: the retry runs afresh", async () => {
    const { apiKey } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const body = streamBody("cut me off")
    provider.setBehaviour({ kind: "cut-stream", afterChunks: 2 })
    const cut = await relay(gw, apiKey, body, key)
    expect(await cut.text()).not.toContain("[DONE]")
    provider.setBehaviour({ kind: "normal" })
    const retry = await relay(gw, apiKey, body, key)
    expect(retry.headers.get("x-service-idempotent-replay")).toBeNull()
    expect(await retry.text()).toContain("data: [DONE]")
    expect(provider.received).toHaveLength(2)
  })
})

describe("an idempotent relay call's response is stored with its settlement (one statement)", () => {
  const usageRows = (g: TestGateway, orgId: string) =>
    g.query("SELECT 1 FROM usage_records WHERE org_id = $1", orgId).then((r) => r.length)
  const receiptRows = (g: TestGateway, orgId: string) =>
    g.query("SELECT 1 FROM receipts_v2 WHERE org_id = $1", orgId).then((r) => r.length)
  const storedRecord = (g: TestGateway, key: string) =>
    g.query<{ headers: Record<string, string>; streamed: boolean }>(
      "SELECT headers, streamed FROM idempotency_records WHERE idempotency_key = $1",
      key
    )

  /** Makes every write of an idempotency record fail, as a crash between settling and storing would lose it. */
  const failRecordWrites = async (g: TestGateway) => {
    await g.query(`CREATE OR REPLACE FUNCTION test_refuse_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'idempotency record refused by the test'; END $$`)
    await g.query(`CREATE TRIGGER test_refuse_record BEFORE INSERT ON idempotency_records
      FOR EACH ROW EXECUTE FUNCTION test_refuse_record()`)
  }
  const allowRecordWrites = (g: TestGateway) => g.query("DROP TRIGGER IF EXISTS test_refuse_record ON idempotency_records")

  it("the record is there when the answer arrives, with the answer's receipt headers", async () => {
    const { apiKey } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const res = await relay(gw, apiKey, chatBody("stored at once"), key)
    expect(res.status).toBe(200)
    // No waiting: the record was committed before the answer was sent.
    const [record] = await storedRecord(gw, key)
    expect(record.streamed).toBe(false)
    expect(record.headers["x-service-receipt-v2-jti"]).toBe(res.headers.get("x-service-receipt-v2-jti"))
    expect(record.headers["x-service-receipt-v2"]).toBe(res.headers.get("x-service-receipt-v2"))
    expect(record.headers["x-service-receipt-v3"]).toBe(res.headers.get("x-service-receipt-v3"))
  })

  it("a record that cannot be written takes the settlement with it: no usage, no debit, no receipt; the retry runs once", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const balance = await balanceMicros(gw, orgId)
    const key = crypto.randomUUID()
    const body = chatBody("all or nothing")
    await failRecordWrites(gw)
    try {
      const failed = await relay(gw, apiKey, body, key)
      expect(failed.status).toBe(500)
      expect((await failed.json()).error.code).toBe("internal_error")
      expect(await usageRows(gw, orgId)).toBe(0)
      expect(await debits(gw, orgId)).toBe(0)
      expect(await receiptRows(gw, orgId)).toBe(0)
      expect(await balanceMicros(gw, orgId)).toBe(balance)
      expect(await storedRecord(gw, key)).toHaveLength(0)
      // The call's hold went back at once, not at its expiry.
      const [wallet] = await gw.query<{ held: string }>("SELECT held_micros::text AS held FROM wallets WHERE org_id = $1", orgId)
      expect(wallet.held).toBe("0")
      // A call without a key settles as before: only the record's write was refused.
      expect((await relay(gw, apiKey, chatBody("no key"))).status).toBe(200)
      expect(await usageRows(gw, orgId)).toBe(1)
    } finally {
      await allowRecordWrites(gw)
    }
    const retry = await relay(gw, apiKey, body, key)
    expect(retry.status).toBe(200)
    expect(retry.headers.get("x-service-idempotent-replay")).toBeNull()
    expect(await usageRows(gw, orgId)).toBe(2)
    expect(await debits(gw, orgId)).toBe(2)
    const replay = await relay(gw, apiKey, body, key)
    expect(replay.headers.get("x-service-idempotent-replay")).toBe("true")
    expect(await debits(gw, orgId)).toBe(2)
    expect(provider.received).toHaveLength(3)
  })

  it("a streamed call's transcript is stored with its settlement, trailer included", async () => {
    const { apiKey, orgId } = await fundedKey(gw)
    const key = crypto.randomUUID()
    const res = await relay(gw, apiKey, chatBody("stream stored", { stream: true }), key)
    const transcript = await res.text()
    expect(transcript).toContain("event: receipt-v2")
    const [record] = await storedRecord(gw, key)
    expect(record.streamed).toBe(true)
    const stored = await gw.query<{ body_base64: string }>("SELECT body_base64 FROM idempotency_records WHERE idempotency_key = $1", key)
    expect(Buffer.from(stored[0].body_base64, "base64").toString("utf8")).toBe(transcript)
    expect(await usageRows(gw, orgId)).toBe(1)
  })
})

describe("Idempotency-Key across two gateway nodes", () => {
  it("a duplicate sent to the other node while the first is in flight gets the same response; one upstream call", async () => {
    const [a, b] = await startTestGatewayPair({ LOCAL_PROVIDER_URL: provider.url })
    try {
      const { apiKey } = await fundedKey(a)
      provider.setBehaviour({ kind: "delay", ms: 800 })
      const key = crypto.randomUUID()
      const body = chatBody("two nodes")
      const original = relay(a, apiKey, body, key)
      await untilForwarded()
      const duplicate = await relay(b, apiKey, body, key)
      const first = await original
      expect(first.status).toBe(200)
      expect(duplicate.status).toBe(200)
      expect(await duplicate.text()).toBe(await first.text())
      expect(provider.received).toHaveLength(1)
    } finally {
      await a.close()
      await b.close()
    }
  }, 60_000)
})
