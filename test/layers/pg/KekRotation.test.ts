import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOidcClient, createOrg } from "../../../layers/AdminOperations.ts"
import { gatewayServicesLayer } from "../../../layers/GatewayLive.ts"
import { parseKekFile } from "../../../layers/KeyEncryptionLive.ts"
import { byokContext } from "../../../layers/pg/Byok.ts"
import { kekRotationLayer, rotateKek, SEALED_COLUMNS } from "../../../layers/pg/KekRotation.ts"
import { jsonColumn } from "../../../layers/pg/jsonColumn.ts"
import { Byok } from "../../../services/Byok.ts"
import { KeyEncryption } from "../../../services/KeyEncryption.ts"
import { ReceiptKeys } from "../../../services/ReceiptKeys.ts"
import { Webhooks } from "../../../services/Webhooks.ts"
import { SsoConnections } from "../../../services/SsoConnections.ts"
import { importKek, sealSecretWithKekId } from "../../../src/crypto/aead.ts"
import { secretContext } from "../../../layers/pg/Webhooks.ts"
import { createTestStorage, type TestStorage } from "../../support/databases.ts"

/**
 * KEK rotation end to end on real storage (PGlite in a data directory, or PostgreSQL with DATABASE_URL): values
 * sealed under KEK A stay readable by nodes given KEK_FILE=B and KEK_PREVIOUS_FILE=A; `rotateKek` re-seals all of
 * them under B (refusing, and changing nothing, without a previous key or with a wrong one); afterwards a node with
 * only B reads everything, and a second run writes nothing.
 */

const dir = mkdtempSync(join(tmpdir(), "pr-kek-rotation-"))
const kekFile = (name: string, byte: string) => {
  const file = join(dir, name)
  writeFileSync(file, byte.repeat(32) + "\n", { mode: 0o600 })
  return file
}
const KEK_A = kekFile("kek-a", "a1")
const KEK_B = kekFile("kek-b", "b2")
const KEK_C = kekFile("kek-c", "c3")

let storage: TestStorage
let base: Record<string, string>
beforeAll(async () => {
  storage = await createTestStorage()
  // A data directory, not :memory:, so that successive runtimes (restarts) see the same embedded database.
  base = { LOG_LEVEL: "error", TRACE_SAMPLE_RATIO: "0", WEBHOOK_DISPATCHER: "off", ...storage.env, DATA_DIR: join(dir, "data") }
})
afterAll(async () => {
  await storage.drop()
  rmSync(dir, { recursive: true, force: true })
})

/** Runs `use` in a fresh runtime over `layer` (one process start) and disposes it (the process stops). */
const withRuntime = async <A>(layer: Layer.Layer<any, any, never>, use: Effect.Effect<A, any, any>): Promise<A> => {
  const runtime = ManagedRuntime.make(layer)
  try {
    return await runtime.runPromise(use as Effect.Effect<A, any, never>)
  } finally {
    await runtime.dispose()
  }
}
const gateway = (env: Record<string, string>) => gatewayServicesLayer({ ...base, ...env }) as Layer.Layer<any, any, never>
const rotation = (env: Record<string, string>) => kekRotationLayer({ ...base, ...env }) as Layer.Layer<any, any, never>

/** Every stored sealed value, as stored (envelope text), by table and primary key. */
const rawEnvelopes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, string> = {}
  for (const c of SEALED_COLUMNS) {
    const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT ${c.key.join(", ")}, ${c.column} AS v FROM ${c.table} ORDER BY ${c.key.join(", ")}`)
    for (const row of rows) {
      if (row.v === null) continue
      const v = c.json ? jsonColumn<{ sealed?: string }>(row.v).sealed : (row.v as string)
      if (v !== undefined) out[`${c.table}(${c.key.map((k) => String(row[k])).join(",")})`] = v
    }
  }
  return out
})

/** Every stored sealed value opened by this node's KeyEncryption (dies if one does not open). */
const openedValues = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const keys = yield* KeyEncryption
  const out: Record<string, string> = {}
  for (const c of SEALED_COLUMNS) {
    const columns = [...c.key, ...(c.extra ?? [])].map((k) => `${k}::text AS ${k}`).join(", ")
    const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT ${columns}, ${c.column} AS v FROM ${c.table}`)
    for (const row of rows) {
      if (row.v === null) continue
      const envelope = c.json ? jsonColumn<{ sealed?: string }>(row.v).sealed : (row.v as string)
      if (envelope === undefined) continue
      out[`${c.table}(${c.key.map((k) => String(row[k])).join(",")})`] = yield* keys.open(envelope, c.context(row as Record<string, string>))
    }
  }
  return out
})

const countByTable = (values: Record<string, string>) => {
  const counts: Record<string, number> = {}
  for (const name of Object.keys(values)) counts[name.slice(0, name.indexOf("("))] = (counts[name.slice(0, name.indexOf("("))] ?? 0) + 1
  return counts
}

describe("KEK rotation (KEK_PREVIOUS_FILE and kek rotate)", () => {
  let orgId: string
  let webhookSecret: string
  let receiptKid: string
  let sealedUnderA: Record<string, string>
  let plaintexts: Record<string, string>

  it("a database sealed under KEK A: every sealed column of the schema is one rotation knows", async () => {
    const seeded = await withRuntime(gateway({ KEK_FILE: KEK_A }), Effect.gen(function*() {
      const { org_id } = yield* createOrg({ name: "kek-rotation" })
      yield* (yield* Byok).put(org_id, "openai", "sk-openai-under-a")
      const { secret } = yield* (yield* Webhooks).createEndpoint(org_id, { url: "https://hooks.example.com/in", events: ["key.revoked"] })
      yield* createOidcClient({ redirect_uri: "https://app.example.com/cb", name: "kek test" })
      yield* (yield* SsoConnections).setOidc({
        actor: "test",
        orgId: org_id,
        issuer: "https://idp.example.com",
        clientId: "gateway",
        clientSecret: Redacted.make("sso-client-secret-under-a"),
        allowedDomains: ["example.com"],
        jitRole: "member"
      })
      // A value in the aead2 form (names its KEK): what a later release writes; rotation reads it too.
      const a = yield* Effect.promise(() => importKek(parseKekFile(readFileSync(KEK_A))))
      const envelope = yield* Effect.promise(() => sealSecretWithKekId(a, "sk-anthropic-under-a", byokContext(org_id, "anthropic")))
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO byok_credentials ${sql.insert({ org_id, provider: "anthropic", ciphertext: envelope, last4: "er-a" })}`
      // Which (table, column) pairs hold sealed values, found in the schema rather than in the list under test.
      const columns = yield* sql<{ table_name: string; column_name: string }>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND data_type IN ('text', 'jsonb') ORDER BY table_name, column_name`
      const holding: Array<string> = []
      for (const { table_name, column_name } of columns) {
        const [hit] = yield* sql.unsafe<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${table_name}" WHERE "${column_name}"::text ~ '^aead[0-9]\\.|"sealed": *"aead[0-9]\\.'`
        )
        if (hit!.n > 0) holding.push(`${table_name}.${column_name}`)
      }
      return {
        orgId: org_id,
        secret,
        receiptKid: (yield* (yield* ReceiptKeys).current).kid,
        holding,
        raw: yield* rawEnvelopes,
        opened: yield* openedValues
      }
    }))
    orgId = seeded.orgId
    webhookSecret = seeded.secret
    receiptKid = seeded.receiptKid
    sealedUnderA = seeded.raw
    plaintexts = seeded.opened
    expect(seeded.holding.sort()).toEqual(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort())
    expect(countByTable(sealedUnderA)).toEqual({
      receipt_signing_keys: 1,
      webhook_endpoints: 1,
      byok_credentials: 2,
      oidc_signing_keys: 2,
      oidc_payloads: 1,
      sso_connections: 1
    })
    expect(plaintexts[`byok_credentials(${orgId},openai)`]).toBe("sk-openai-under-a")
    expect(plaintexts[`sso_connections(${orgId})`]).toBe("sso-client-secret-under-a")
    expect(Object.entries(plaintexts).filter(([name]) => name.startsWith("webhook_endpoints(")).map(([, v]) => v)).toEqual([webhookSecret])
  }, 60_000)

  it("refuses without KEK_PREVIOUS_FILE (kek_previous_missing) and with a wrong one (kek_unreadable), changing nothing", async () => {
    const missing = await withRuntime(rotation({ KEK_FILE: KEK_B }), Effect.flip(rotateKek()))
    expect(missing._tag).toBe("KekRotationRefused")
    expect((missing as any).reason).toBe("kek_previous_missing")
    expect((missing as any).message).toMatch(/KEK_PREVIOUS_FILE is not set/)

    const progress: Array<string> = []
    const [wrong, after] = await withRuntime(
      rotation({ KEK_FILE: KEK_B, KEK_PREVIOUS_FILE: KEK_C }),
      Effect.gen(function*() {
        // One value really is under C: it opens, but nothing may be written while others open under neither key.
        const sql = yield* SqlClient.SqlClient
        const c = yield* Effect.promise(() => importKek(parseKekFile(readFileSync(KEK_C))))
        const underC = yield* Effect.promise(() => sealSecretWithKekId(c, "sk-cohere-under-c", byokContext(orgId, "cohere")))
        yield* sql`INSERT INTO byok_credentials ${sql.insert({ org_id: orgId, provider: "cohere", ciphertext: underC, last4: "er-c" })}`
        const error = yield* Effect.flip(rotateKek({ batchSize: 1, onProgress: (p) => progress.push(`${p.phase}:${p.table}`) }))
        const [stored] = yield* sql<{ ciphertext: string }>`SELECT ciphertext FROM byok_credentials WHERE provider = 'cohere'`
        expect(stored!.ciphertext).toBe(underC)
        yield* sql`DELETE FROM byok_credentials WHERE provider = 'cohere'`
        return [error, yield* rawEnvelopes] as const
      })
    )
    expect((wrong as any).reason).toBe("kek_unreadable")
    expect((wrong as any).message).toMatch(/8 stored value\(s\) open under neither .*Nothing was changed\./)
    expect((wrong as any).details.unreadable).toEqual(countByTable(sealedUnderA))
    expect((wrong as any).details.examples).toHaveLength(5)
    // Nothing secret in what is printed: no plaintext, no envelope.
    const printed = JSON.stringify({ message: (wrong as any).message, details: (wrong as any).details })
    for (const [name, plaintext] of Object.entries(plaintexts)) {
      expect(printed).not.toContain(plaintext)
      expect(printed).not.toContain(sealedUnderA[name]!)
    }
    expect(progress.every((p) => p.startsWith("check:"))).toBe(true)
    expect(after).toEqual(sealedUnderA)
  }, 60_000)

  it("nodes with KEK_FILE=B and KEK_PREVIOUS_FILE=A read what A sealed and seal under B; kek rotate re-seals the rest, and a second run writes nothing", async () => {
    const result = await withRuntime(gateway({ KEK_FILE: KEK_B, KEK_PREVIOUS_FILE: KEK_A }), Effect.gen(function*() {
      const byok = yield* Byok
      const readBefore = yield* openedValues
      const credentials = yield* byok.credentialsOf(orgId)
      const kid = (yield* (yield* ReceiptKeys).current).kid
      // Written while the rotation is under way: sealed under B already.
      yield* byok.put(orgId, "mistral", "sk-mistral-under-b")
      const progress: Array<string> = []
      const first = yield* rotateKek({ batchSize: 1, onProgress: (p) => progress.push(`${p.phase}:${p.table}:${p.seen}:${p.rewritten}`) })
      const afterFirst = yield* rawEnvelopes
      const second = yield* rotateKek()
      const afterSecond = yield* rawEnvelopes
      return { readBefore, credentials, kid, first, second, afterFirst, afterSecond, progress }
    }))
    expect(result.readBefore).toEqual(plaintexts)
    expect(Object.fromEntries(result.credentials)).toEqual({ openai: "sk-openai-under-a", anthropic: "sk-anthropic-under-a" })
    expect(result.kid).toBe(receiptKid)

    const keys = await Promise.all([KEK_A, KEK_B].map(async (f) => (await importKek(parseKekFile(readFileSync(f)))).id))
    expect(result.first.kek).toBe(keys[1])
    expect(result.first.previous_kek).toBe(keys[0])
    expect(result.first.tables).toEqual({
      receipt_signing_keys: { values: 1, already_current: 0, rewritten: 1, changed_meanwhile: 0 },
      webhook_endpoints: { values: 1, already_current: 0, rewritten: 1, changed_meanwhile: 0 },
      byok_credentials: { values: 3, already_current: 1, rewritten: 2, changed_meanwhile: 0 },
      oidc_signing_keys: { values: 2, already_current: 0, rewritten: 2, changed_meanwhile: 0 },
      oidc_payloads: { values: 1, already_current: 0, rewritten: 1, changed_meanwhile: 0 },
      sso_connections: { values: 1, already_current: 0, rewritten: 1, changed_meanwhile: 0 }
    })
    expect(result.first.rewritten).toBe(8)
    expect(result.progress).toContain("rewrite:byok_credentials:3:2")
    expect(result.progress.filter((p) => p.startsWith("check:"))).toHaveLength(9)
    // Every envelope read under A changed; the value written under B did not.
    for (const [name, envelope] of Object.entries(sealedUnderA)) expect(result.afterFirst[name]).not.toBe(envelope)
    expect(result.second.rewritten).toBe(0)
    expect(result.second.tables.byok_credentials).toEqual({ values: 3, already_current: 3, rewritten: 0, changed_meanwhile: 0 })
    expect(result.afterSecond).toEqual(result.afterFirst)
  }, 90_000)

  it("after kek rotate, a node with only KEK_FILE=B starts and reads every value; KEK A alone reads none", async () => {
    const onlyB = await withRuntime(gateway({ KEK_FILE: KEK_B }), Effect.gen(function*() {
      return {
        opened: yield* openedValues,
        credentials: yield* (yield* Byok).credentialsOf(orgId),
        kid: (yield* (yield* ReceiptKeys).current).kid,
        webhook: yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ secret_envelope: string }>`SELECT secret_envelope FROM webhook_endpoints WHERE org_id = ${orgId}`
          return yield* (yield* KeyEncryption).open(row!.secret_envelope, secretContext(orgId))
        })
      }
    }))
    const { [`byok_credentials(${orgId},mistral)`]: mistral, ...rest } = onlyB.opened
    expect(rest).toEqual(plaintexts)
    expect(mistral).toBe("sk-mistral-under-b")
    expect(Object.fromEntries(onlyB.credentials)).toEqual({
      openai: "sk-openai-under-a",
      anthropic: "sk-anthropic-under-a",
      mistral: "sk-mistral-under-b"
    })
    expect(onlyB.kid).toBe(receiptKid)
    expect(onlyB.webhook).toBe(webhookSecret)

    const underA = await withRuntime(
      rotation({ KEK_FILE: KEK_A }),
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const keys = yield* KeyEncryption
        const rows = yield* sql<{ ciphertext: string; provider: string }>`SELECT provider, ciphertext FROM byok_credentials WHERE org_id = ${orgId}`
        return yield* Effect.forEach(rows, (r) => Effect.result(keys.openTagged(r.ciphertext, byokContext(orgId, r.provider))))
      })
    )
    expect(underA.map((r) => r._tag)).toEqual(["Failure", "Failure", "Failure"])
  }, 60_000)
})
