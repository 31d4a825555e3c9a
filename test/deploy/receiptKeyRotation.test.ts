import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { creditWallet } from "../../layers/AdminOperations.ts"
import { gatewayServicesLayer } from "../../layers/GatewayLive.ts"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { verifyChainExport, verifyReceipt } from "../../sdks/typescript/src/verify/index.ts"
import { canonicalString } from "../../sdks/typescript/src/wire/crypto/jcs.ts"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { attestedHeaders } from "../support/engine.ts"
import { exited, type GatewayProcess, startGatewayProcess } from "../support/gatewayProcess.ts"
import { freePort } from "../support/nginxProxy.ts"

/**
 * Scheduled receipt key rotation with real gateway processes (issue 42): three `programs/gateway.ts` OS processes on one
 * PostgreSQL and one Redis, each with the 2-second schedule, relaying attested calls all the time, and an operator's
 * `cli.ts receipts keys rotate` in the middle. Every answer's v2 receipt and v3 countersignature was signed with the
 * key current at the time (never one retired before), one key was made per period, every receipt verifies with the
 * JWKS any node publishes, and every node's PEM names the current key.
 *
 * Separate processes cannot share embedded PGlite: skipped (and counted as skipped) in the embedded run, where
 * test/layers/pg/ReceiptKeyRotation.test.ts runs the same schedule with several key services on one database.
 */
const PG_AND_REDIS = process.env.DATABASE_URL !== undefined && process.env.REDIS_URL !== undefined
const PERIOD_MS = 2000
const NO_TIER_LIMITS = JSON.stringify({ free: { keyPerMinute: null, tenantPer60s: 100000, tenantPer3600s: 1000000, monthlyTokens: null } })

const decode = (header: string | null) => (header === null ? undefined : JSON.parse(Buffer.from(header, "base64").toString("utf8")))

describe.skipIf(!PG_AND_REDIS)("receipt key rotation across gateway processes (PostgreSQL + Redis)", () => {
  let provider: FakeProvider
  let storage: TestStorage
  let secretsDir: string
  let admin: ManagedRuntime.ManagedRuntime<any, any>
  let env: (port: number) => Record<string, string>
  const nodes: Array<{ url: string; process: GatewayProcess }> = []

  const query = <A>(statement: string, ...params: Array<unknown>) =>
    admin.runPromise(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(statement, params)) as Effect.Effect<any, any, never>) as Promise<ReadonlyArray<A>>

  const cli = (args: Array<string>) =>
    new Promise<{ code: number | null; json: any }>((resolve) => {
      const child = spawn(process.execPath, [join(import.meta.dirname, "../../programs/cli.ts"), ...args], {
        env: { ...process.env, ...env(0), LOG_LEVEL: "error" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      child.stdout.on("data", (c) => (stdout += c))
      child.once("exit", (code) => resolve({ code, json: stdout.trim() === "" ? null : JSON.parse(stdout.trim().split("\n").at(-1)!) }))
    })

  beforeAll(async () => {
    provider = await startFakeProvider({ port: 0 })
    storage = await createTestStorage()
    secretsDir = mkdtempSync(join(tmpdir(), "pr-key-rotation-"))
    writeFileSync(join(secretsDir, "kek"), Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"), { mode: 0o600 })
    env = (port) => ({
      ...storage.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      KEK_FILE: join(secretsDir, "kek"),
      LOG_LEVEL: "info",
      TRACE_SAMPLE_RATIO: "0",
      LOCAL_PROVIDER_URL: provider.url,
      PROVIDER_LOCAL_TIMEOUT_MS: "30000",
      RATE_LIMITS_JSON: NO_TIER_LIMITS,
      RECEIPT_CHAIN_VERIFY_MS: "0",
      RECEIPT_KEY_ROTATION: "2s",
      // No background refresh: a node hears of another's rotation at the boundary or from a refused write.
      RECEIPT_KEYS_REFRESH_MS: "600000"
    })
    for (let i = 0; i < 3; i++) {
      const port = await freePort()
      nodes.push({ url: `http://127.0.0.1:${port}`, process: await startGatewayProcess(env(port)) })
    }
    admin = ManagedRuntime.make(gatewayServicesLayer({ ...env(0), LOG_LEVEL: "error", WEBHOOK_DISPATCHER: "off", RECEIPT_KEY_ROTATION: "off", TRANSPARENCY_SEQUENCE_MS: "0" }) as Layer.Layer<any, any, never>)
  }, 300_000)

  afterAll(async () => {
    for (const node of nodes) {
      node.process.child.kill("SIGKILL")
      await exited(node.process.child)
    }
    await admin?.dispose()
    await provider?.close()
    await storage?.drop()
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true })
  })

  it("every receipt and countersignature signed while its key was current; one key per period; every node publishes every key and names the current one", async () => {
    const key = await fetch(`${nodes[0]!.url}/api/v1/self-service/key`, { method: "POST", body: "{}" }).then((r) => r.json())
    const [{ org_id: orgId }] = await query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", key.key_prefix)
    await admin.runPromise(creditWallet({ org_id: orgId, usd: "50" }) as Effect.Effect<unknown, unknown, never>)

    const answers: Array<{ v2: any; v3: any }> = []
    const failures: Array<string> = []
    let n = 0
    const deadline = Date.now() + 4 * PERIOD_MS + 500
    const caller = async (c: number) => {
      while (Date.now() < deadline) {
        const node = nodes[(c + n++) % nodes.length]!
        const body = canonicalString({ max_tokens: 8, messages: [{ role: "user", content: `rotation call ${n} <EMAIL_1>` }], model: "local-chat" })
        const res = await fetch(`${node.url}/api/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key.api_key}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
          body
        })
        await res.arrayBuffer()
        if (res.status !== 200) failures.push(`${res.status}`)
        else answers.push({ v2: decode(res.headers.get("x-service-receipt-v2")), v3: decode(res.headers.get("x-service-receipt-v3")) })
      }
    }
    const operator = async () => {
      await new Promise((r) => setTimeout(r, PERIOD_MS * 1.5))
      return cli(["receipts", "keys", "rotate"])
    }
    const [manual] = await Promise.all([operator(), ...Array.from({ length: 6 }, (_, c) => caller(c))])
    expect(manual.code).toBe(0)
    expect(manual.json).toMatchObject({ trigger: "manual", period: null })
    expect(failures).toEqual([])
    expect(answers.length).toBeGreaterThan(20)

    const keys = await query<{ kid: string; rotation_trigger: string; activated_ms: string; retired_ms: string | null; period_ms: string | null }>(`
      SELECT kid, rotation_trigger, (extract(epoch from activated_at) * 1000)::float8::text AS activated_ms,
        (extract(epoch from retired_at) * 1000)::float8::text AS retired_ms, (extract(epoch from period_start) * 1000)::float8::text AS period_ms
      FROM receipt_signing_keys ORDER BY activated_at`)
    const scheduled = keys.filter((k) => k.rotation_trigger === "schedule").map((k) => Number(k.period_ms))
    expect(scheduled.length).toBeGreaterThanOrEqual(3)
    expect(new Set(scheduled).size).toBe(scheduled.length)
    scheduled.forEach((p, i) => i > 0 && expect(p - scheduled[i - 1]!).toBe(PERIOD_MS))
    expect(keys.map((k) => k.kid)).toContain(manual.json.kid)

    const windowOf = (kid: string) => keys.find((k) => k.kid === kid)!
    for (const { v2, v3 } of answers) {
      // the countersignature is signed with the receipt's key, in the same settlement
      expect(v3.kid).toBe(v2.kid)
      for (const signed of [v2, v3]) {
        const k = windowOf(signed.kid)
        const at = Date.parse(signed.timestamp)
        expect(at).toBeGreaterThanOrEqual(Number(k.activated_ms) - 1)
        if (k.retired_ms !== null) expect(at, `${signed.kid} retired at ${k.retired_ms}`).toBeLessThanOrEqual(Number(k.retired_ms))
      }
    }
    expect(new Set(answers.map((a) => a.v2.kid)).size).toBeGreaterThanOrEqual(3)

    // Every node publishes every key: all receipts verify with any node's JWKS, and the chain is whole.
    for (const node of nodes) {
      const jwks = await fetch(`${node.url}/api/.well-known/service-receipt-pubkeys.jwks`).then((r) => r.json())
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining(keys.map((k) => k.kid)))
      for (const { v2, v3 } of answers.slice(0, 40)) {
        expect((await verifyReceipt(v2, { jwks })).valid).toBe(true)
        expect((await verifyReceipt(v3, { jwks })).valid).toBe(true)
      }
    }
    const jwks = await fetch(`${nodes[1]!.url}/api/.well-known/service-receipt-pubkeys.jwks`).then((r) => r.json())
    const stored = await query<{ envelope: unknown }>("SELECT envelope FROM receipts_v2 WHERE org_id = $1 ORDER BY seq", orgId)
    expect((await verifyChainExport(stored.map((r) => r.envelope), { jwks })).valid).toBe(true)

    // Every node's PEM names the key current now (the schedule goes on: ask until a boundary does not fall between).
    for (let attempt = 0; attempt < 10; attempt++) {
      const [{ kid }] = await query<{ kid: string }>("SELECT kid FROM receipt_signing_keys WHERE is_current")
      const named = await Promise.all(nodes.map((node) => fetch(`${node.url}/api/.well-known/service-receipt-pubkey.pem`).then((r) => r.headers.get("x-service-receipt-kid"))))
      const [{ kid: after }] = await query<{ kid: string }>("SELECT kid FROM receipt_signing_keys WHERE is_current")
      if (kid !== after) continue
      expect(named).toEqual([kid, kid, kid])
      return
    }
    throw new Error("the current key kept changing while the PEMs were read")
  }, 180_000)
})
