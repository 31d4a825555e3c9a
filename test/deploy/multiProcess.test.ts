import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkLedger, createPortalToken, creditWallet } from "../../layers/AdminOperations.ts"
import { gatewayServicesLayer } from "../../layers/GatewayLive.ts"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { ChainVerifier } from "../../services/ChainVerifier.ts"
import { canonicalString } from "../../sdks/typescript/src/wire/crypto/jcs.ts"
import { startReceiver, type Receiver } from "../layers/webhookTestKit.ts"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { attestedHeaders } from "../support/engine.ts"
import { exited, type GatewayProcess, startGatewayProcess } from "../support/gatewayProcess.ts"
import { freePort, type NginxProxy, startNginx } from "../support/nginxProxy.ts"
import { refusesConnections } from "../support/refusesConnections.ts"

/**
 * Production shape (issue 25) and the settlement guarantees under it (issue 24): two `programs/gateway.ts` OS
 * processes on one PostgreSQL and one Redis, Debian's nginx with the shipped deploy/nginx files in front, the fake
 * provider and a webhook receiver, all on 127.0.0.1. One node is killed with SIGKILL under load and restarted, a
 * nearly empty wallet is hammered from both nodes, and one node is stopped with SIGTERM under load.
 *
 * Needs PostgreSQL and Redis (separate processes cannot share embedded PGlite or in-process counters): skipped, and
 * counted as skipped, in the embedded run.
 */
const PG_AND_REDIS = process.env.DATABASE_URL !== undefined && process.env.REDIS_URL !== undefined

const NO_TIER_LIMITS = JSON.stringify({ free: { keyPerMinute: null, tenantPer60s: 100000, tenantPer3600s: 1000000, monthlyTokens: null } })
const GRACE_MS = 15_000
const RATE_LIMIT_PER_60S = 24

interface Tenant {
  readonly apiKey: string
  readonly keyPrefix: string
  readonly orgId: string
}

interface CallSpec {
  readonly id: string
  readonly tenant: Tenant
  readonly stream: boolean
  readonly idempotencyKey?: string
  readonly maxTokens?: number
  /** Sends go here (nginx, or one node directly); a function so a retry can go elsewhere. */
  readonly target: () => string
}

interface Attempt {
  /** HTTP status; 0 when the connection failed or was cut before the headers. */
  readonly status: number
  readonly requestId: string | null
  readonly replayed: boolean
  /** The v2 receipt's jti (header, or a stream's trailer frame). */
  readonly jti: string | null
  /** A 2xx answer that arrived whole (a stream with its receipt trailer). */
  readonly complete: boolean
  readonly startedAt: number
  readonly endedAt: number
  /** The gateway's error code (`error.code`) of a non-2xx answer. */
  readonly code?: string
  readonly error?: string
}

interface CallResult {
  readonly spec: CallSpec
  readonly attempts: ReadonlyArray<Attempt>
}

const ok = (a: Attempt) => a.status >= 200 && a.status < 300 && a.complete
const answered = (r: CallResult) => r.attempts.find(ok)
/** Cut by a node's death: no status, nginx's 502, or a 2xx stream without its trailer. */
const cut = (a: Attempt) => a.status === 0 || a.status === 502 || (a.status === 200 && !a.complete)

/** Canonical JSON (sorted keys, no spaces), so the receipt's hash_upstream_request is the SHA-256 of these bytes. */
const bodyOf = (spec: CallSpec) =>
  canonicalString({
    max_tokens: spec.maxTokens ?? 16,
    messages: [{ role: "user", content: `multi-process call ${spec.id} <EMAIL_1> one two three four five six seven eight nine ten eleven twelve` }],
    model: "local-chat",
    ...(spec.stream ? { stream: true } : {})
  })
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const callOnce = async (spec: CallSpec): Promise<Attempt> => {
  const body = bodyOf(spec)
  const startedAt = Date.now()
  try {
    const res = await fetch(`${spec.target()}/api/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${spec.tenant.apiKey}`,
        "content-type": "application/json",
        ...(spec.idempotencyKey === undefined ? {} : { "idempotency-key": spec.idempotencyKey }),
        ...(await attestedHeaders("chat.completions", body))
      },
      body,
      signal: AbortSignal.timeout(60_000)
    })
    const requestId = res.headers.get("x-request-id")
    const replayed = res.headers.get("idempotency-replayed") === "true"
    let text: string
    try {
      text = await res.text()
    } catch (error) {
      return { status: res.status, requestId, replayed, jti: null, complete: false, startedAt, endedAt: Date.now(), error: String(error) }
    }
    if (!res.ok) {
      let code: string | undefined
      try {
        code = JSON.parse(text).error?.code
      } catch {}
      return { status: res.status, requestId, replayed, jti: null, complete: false, startedAt, endedAt: Date.now(), ...(code === undefined ? {} : { code }) }
    }
    if (!spec.stream) {
      const jti = res.headers.get("x-service-receipt-v2-jti")
      return { status: res.status, requestId, replayed, jti, complete: jti !== null, startedAt, endedAt: Date.now() }
    }
    const trailer = /event: receipt-v2\ndata: (.+)\n/.exec(text)
    const jti = trailer === null ? null : (JSON.parse(trailer[1]!) as { jti: string }).jti
    return { status: res.status, requestId, replayed, jti, complete: jti !== null && text.includes("data: [DONE]"), startedAt, endedAt: Date.now() }
  } catch (error) {
    return { status: 0, requestId: null, replayed: false, jti: null, complete: false, startedAt, endedAt: Date.now(), error: String(error) }
  }
}

/**
 * One logical call. With an Idempotency-Key it is retried (same key, same body) after a cut, a 5xx or 409
 * idempotency_in_flight (Retry-After: 1), as a careful client would, for up to 60 s; without one it is sent once.
 * A key whose original died with its node is in flight until the dead node's slot expires (15 s).
 */
const runCall = async (spec: CallSpec): Promise<CallResult> => {
  const attempts: Array<Attempt> = []
  const giveUpAt = Date.now() + 60_000
  for (;;) {
    const attempt = await callOnce(spec)
    attempts.push(attempt)
    if (spec.idempotencyKey === undefined || ok(attempt) || Date.now() > giveUpAt) break
    if (attempt.status === 409) await new Promise((r) => setTimeout(r, 1000))
    else if (cut(attempt) || attempt.status >= 500) await new Promise((r) => setTimeout(r, 300))
    else break
  }
  return { spec, attempts }
}

/** Runs `specs` with `concurrency` callers; `onDone(n)` after each completed call. */
const runLoad = async (specs: ReadonlyArray<CallSpec>, concurrency: number, onDone?: (done: number) => void) => {
  const results: Array<CallResult> = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < specs.length) {
      const spec = specs[next++]!
      results.push(await runCall(spec))
      onDone?.(results.length)
    }
  }))
  return results
}

describe.skipIf(!PG_AND_REDIS)("two gateway processes on PostgreSQL + Redis behind nginx", () => {
  let provider: FakeProvider
  let storage: TestStorage
  let receiver: Receiver
  let nginx: NginxProxy
  let admin: ManagedRuntime.ManagedRuntime<any, any>
  let secretsDir: string
  let nodeEnv: (port: number) => Record<string, string>
  const nodes: Array<{ port: number; process: GatewayProcess; retired: Array<GatewayProcess> }> = []

  const run = <A>(effect: Effect.Effect<A, any, any>) => admin.runPromise(effect as Effect.Effect<A, any, never>)
  const query = <A>(statement: string, ...params: Array<unknown>) =>
    run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(statement, params))) as Promise<ReadonlyArray<A>>
  /** Which node process served a request (from its access log lines). */
  const servedBy = (requestId: string | null) => {
    if (requestId === null) return undefined
    for (const [index, node] of nodes.entries()) {
      for (const process of [node.process, ...node.retired]) if (process.output().includes(`"request_id":"${requestId}"`)) return index
    }
    return undefined
  }

  let networks = 0
  const newTenant = async (usd: string): Promise<Tenant> => {
    networks++
    const res = await fetch(`http://127.0.0.1:${nodes[0]!.port}/api/v1/self-service/key`, {
      method: "POST",
      headers: { "x-forwarded-for": `198.51.100.${networks}` },
      body: "{}"
    })
    expect(res.status).toBe(201)
    const { api_key: apiKey, key_prefix: keyPrefix } = await res.json()
    const [{ org_id: orgId }] = await query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", keyPrefix)
    await run(creditWallet({ org_id: orgId, usd }))
    return { apiKey, keyPrefix, orgId: orgId! }
  }

  /**
   * For every complete 2xx answer: exactly one receipt, one usage record and one debit; and over the organisations,
   * receipts, usage records and debits match one to one (no receipt without its debit and usage, no debit without
   * its receipt). Answers the receipts with the call each one billed (by hash_upstream_request).
   */
  const checkSettlements = async (orgIds: ReadonlyArray<string>, results: ReadonlyArray<CallResult>) => {
    const receipts = await query<{ jti: string; hash: string }>(
      "SELECT jti, envelope->>'hash_upstream_request' AS hash FROM receipts_v2 WHERE org_id = ANY($1)", orgIds)
    const usage = await query<{ id: string; receipt_jti: string | null }>("SELECT id::text AS id, receipt_jti FROM usage_records WHERE org_id = ANY($1)", orgIds)
    const debits = await query<{ usage_id: string | null }>(
      "SELECT usage_id::text AS usage_id FROM ledger_entries WHERE org_id = ANY($1) AND kind = 'debit'", orgIds)
    const answers = results.flatMap((r) => r.attempts.filter(ok))
    const countBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string | null) => {
      const counts = new Map<string, number>()
      for (const item of items) counts.set(key(item) ?? "", (counts.get(key(item) ?? "") ?? 0) + 1)
      return counts
    }
    const receiptCount = countBy(receipts, (r) => r.jti)
    const usageByJti = countBy(usage, (u) => u.receipt_jti)
    const debitByUsage = countBy(debits, (d) => d.usage_id)
    const usageIdOf = new Map(usage.map((u) => [u.receipt_jti, u.id]))
    const wrong = answers.filter((a) =>
      receiptCount.get(a.jti!) !== 1 || usageByJti.get(a.jti!) !== 1 || debitByUsage.get(usageIdOf.get(a.jti!) ?? "?") !== 1)
    expect(wrong, "answers without exactly one receipt, usage record and debit").toEqual([])
    expect(usage).toHaveLength(receipts.length)
    expect(debits).toHaveLength(receipts.length)
    expect(new Set(usage.map((u) => u.receipt_jti))).toEqual(new Set(receipts.map((r) => r.jti)))
    expect(new Set(debits.map((d) => d.usage_id))).toEqual(new Set(usage.map((u) => u.id)))
    // Each receipt belongs to one logical call (its body's hash); no call was billed twice, retries included.
    const callOfHash = new Map(results.map((r) => [sha256(bodyOf(r.spec)), r]))
    const billed = countBy(receipts, (r) => r.hash)
    const unknown = receipts.filter((r) => !callOfHash.has(r.hash))
    const twice = [...billed].filter(([, n]) => n > 1).map(([hash]) => callOfHash.get(hash)?.spec.id ?? hash)
    expect(unknown, "receipts of no call this test made").toEqual([])
    expect(twice, "calls billed more than once").toEqual([])
    const answeredJtis = new Set(answers.map((a) => a.jti))
    const billedUnanswered = receipts.filter((r) => !answeredJtis.has(r.jti)).map((r) => callOfHash.get(r.hash)!)
    return { receipts: receipts.length, usage: usage.length, debits: debits.length, answers: answers.length, billedUnanswered }
  }

  const verifyChains = async () => {
    const verdicts = await run(Effect.flatMap(Effect.service(ChainVerifier), (v) => v.verifyAll))
    expect(verdicts.filter((v) => !v.ok), "broken chains").toEqual([])
    // Forks: two receipts claiming one position of a chain.
    const forks = await query<{ chain_id: string; seq: string }>(
      `SELECT chain_id, seq::text AS seq FROM receipts_v2 GROUP BY chain_id, seq HAVING count(*) > 1
       UNION ALL SELECT chain_id, seq::text FROM receipts_v1 GROUP BY chain_id, seq HAVING count(*) > 1`)
    expect(forks).toEqual([])
    return { chains: verdicts.length, receiptsChecked: verdicts.reduce((n, v) => n + v.checked, 0) }
  }

  /** `node programs/cli.ts ledger check` against the shared database, as an operator runs it. */
  const cliLedgerCheck = () =>
    new Promise<{ code: number | null; json: any; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(import.meta.dirname, "../../programs/cli.ts"), "ledger", "check"], {
        env: { ...process.env, ...nodeEnv(0), LOG_LEVEL: "error" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (c) => (stdout += c))
      child.stderr.on("data", (c) => (stderr += c))
      child.once("exit", (code) => resolve({ code, json: stdout.trim() === "" ? null : JSON.parse(stdout), stderr }))
    })

  beforeAll(async () => {
    // Streams of ~14 frames 40 ms apart (~0.6 s), so a signal finds some mid-way.
    provider = await startFakeProvider({ port: 0, delayMs: 20, chunkDelayMs: 40 })
    storage = await createTestStorage()
    receiver = await startReceiver()
    secretsDir = mkdtempSync(join(tmpdir(), "pr-multiproc-"))
    // The nodes of one deployment share the key-encryption key (deploy/make-secrets.sh), or neither reads the other's
    // receipt signing key.
    writeFileSync(join(secretsDir, "kek"), Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex"), { mode: 0o600 })
    nodeEnv = (port) => ({
      ...storage.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      KEK_FILE: join(secretsDir, "kek"),
      LOG_LEVEL: "info",
      TRACE_SAMPLE_RATIO: "0",
      TRUSTED_PROXIES: "127.0.0.1",
      LOCAL_PROVIDER_URL: provider.url,
      // The provider shares this test's process and a loaded machine: slow is not broken here.
      PROVIDER_LOCAL_TIMEOUT_MS: "30000",
      RATE_LIMITS_JSON: NO_TIER_LIMITS,
      WEBHOOK_ALLOW_LOOPBACK: "1",
      WEBHOOK_POLL_MS: "50",
      WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100,100,100,100,100",
      RECEIPT_CHAIN_VERIFY_MS: "0",
      SHUTDOWN_GRACE_MS: String(GRACE_MS)
    })
    const ports = [await freePort(), await freePort()]
    // The first start runs the migrations; the second joins the migrated database.
    const first = await startGatewayProcess(nodeEnv(ports[0]!))
    const second = await startGatewayProcess(nodeEnv(ports[1]!))
    nodes.push({ port: ports[0]!, process: first, retired: [] }, { port: ports[1]!, process: second, retired: [] })
    nginx = await startNginx(ports.map((p) => `127.0.0.1:${p}`))
    // This test's own view of the database (admin operations, SQL, the chain verifier); it delivers no webhooks.
    admin = ManagedRuntime.make(
      gatewayServicesLayer({ ...nodeEnv(0), LOG_LEVEL: "error", WEBHOOK_DISPATCHER: "off", TRANSPARENCY_SEQUENCE_MS: "0" }) as Layer.Layer<any, any, never>
    )
  }, 300_000)

  afterAll(async () => {
    for (const node of nodes) {
      if (node.process.child.exitCode === null && node.process.child.signalCode === null) {
        node.process.child.kill("SIGKILL")
        await exited(node.process.child)
      }
    }
    await nginx?.stop()
    await admin?.dispose()
    await receiver?.close()
    await provider?.close()
    await storage?.drop()
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true })
  })

  it("SIGKILL of one node under mixed load (c=64) and its restart: every answer billed once, chains intact, idempotent retries replayed, rate limit exact across nodes, webhooks delivered, ledger check clean", async () => {
    const tenants = await Promise.all([1, 2, 3, 4].map(() => newTenant("50")))
    const limited = await newTenant("50")
    await query("INSERT INTO org_limits (org_id, capability, per60) VALUES ($1, '*', $2)", limited.orgId, RATE_LIMIT_PER_60S)
    // Every tenant but the limited one has a receiver for its receipt.signed events.
    for (const tenant of tenants) {
      const { token } = await run(createPortalToken({ org_id: tenant.orgId, abilities: ["webhooks.manage"] }))
      const res = await fetch(`${nginx.url}/api/v1/webhooks/endpoints`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ url: receiver.url, events: ["receipt.signed"] })
      })
      expect(res.status).toBe(201)
    }

    // Phase 1, through nginx: 300 calls, 64 at a time; half streamed, half with an Idempotency-Key, four tenants, and
    // 20 calls of the rate-limited tenant among them. Node 1 is killed with SIGKILL after 60 answers, and restarted.
    const viaNginx = () => nginx.url
    const specs: Array<CallSpec> = []
    for (let i = 0; i < 300; i++) {
      const isLimited = i % 15 === 7
      specs.push({
        id: `p1-${i}`,
        tenant: isLimited ? limited : tenants[i % 4]!,
        stream: i % 2 === 0,
        ...(!isLimited && i % 4 < 2 ? { idempotencyKey: crypto.randomUUID() } : {}),
        target: viaNginx
      })
    }
    let killedAt = 0
    let restart: Promise<void> | undefined
    const node1 = nodes[0]!
    const phase1 = await runLoad(specs, 64, (done) => {
      if (done !== 60) return
      killedAt = Date.now()
      node1.process.child.kill("SIGKILL")
      restart = exited(node1.process.child).then(async () => {
        node1.retired.push(node1.process)
        node1.process = await startGatewayProcess(nodeEnv(node1.port))
      })
    })
    expect(killedAt).toBeGreaterThan(0)
    await restart

    // Phase 2, both nodes up again: 40 more calls through nginx, and the limited tenant's last 20 calls sent to the
    // two nodes directly, alternately.
    const phase2Specs: Array<CallSpec> = Array.from({ length: 40 }, (_, i) => ({
      id: `p2-${i}`,
      tenant: tenants[i % 4]!,
      stream: i % 2 === 1,
      idempotencyKey: crypto.randomUUID(),
      target: viaNginx
    }))
    for (let i = 0; i < 20; i++) {
      const node = nodes[i % 2]!
      phase2Specs.push({ id: `p2-limited-${i}`, tenant: limited, stream: false, target: () => `http://127.0.0.1:${node.port}` })
    }
    const phase2 = await runLoad(phase2Specs, 16)

    // An idempotent call answered before is replayed by either node, directly: same receipt, nothing billed again.
    const replayed = phase2.filter((r) => r.spec.idempotencyKey !== undefined && answered(r) !== undefined).slice(0, 6)
    const crossNode: Array<CallResult> = []
    for (const original of replayed) {
      for (const node of nodes) {
        crossNode.push(await runCall({ ...original.spec, target: () => `http://127.0.0.1:${node.port}` }))
      }
    }
    for (const [i, retry] of crossNode.entries()) {
      const first = answered(replayed[Math.floor(i / 2)]!)!
      expect(retry.attempts.map((a) => ({ status: a.status, replayed: a.replayed, jti: a.jti }))).toEqual([{ status: 200, replayed: true, jti: first.jti }])
    }

    const all = [...phase1, ...phase2, ...crossNode]
    const statuses = new Map<string, number>()
    for (const r of all) for (const a of r.attempts) statuses.set(String(a.status), (statuses.get(String(a.status)) ?? 0) + 1)
    // Nothing but answers, the limited tenant's refusals and calls cut by the kill.
    const unexpected = all.flatMap((r) => r.attempts).filter((a) => !ok(a) && !cut(a) && a.status !== 429 && a.status !== 409)
    expect(unexpected).toEqual([])
    const retried = [...phase1, ...phase2].filter((r) => r.spec.idempotencyKey !== undefined && r.attempts.length > 1)
    const retriedReplayed = retried.filter((r) => r.attempts.some((a) => ok(a) && a.replayed))
    expect(retried.every((r) => answered(r) !== undefined), "every idempotent call answered in the end").toBe(true)
    const cutOnce = phase1.filter((r) => r.attempts.some(cut))
    expect(cutOnce.length, "the kill cut calls in flight").toBeGreaterThan(0)

    // Rate limit across nodes: never more answers than the limit, never a refusal before it was reached.
    const limitedCalls = all.filter((r) => r.spec.tenant === limited)
    const limitedOk = limitedCalls.filter((r) => answered(r) !== undefined).length
    const limitedCut = limitedCalls.filter((r) => r.attempts.some(cut)).length
    const limitedRefused = limitedCalls.filter((r) => r.attempts.some((a) => a.status === 429)).length
    expect(limitedCalls).toHaveLength(40)
    expect(limitedOk).toBeLessThanOrEqual(RATE_LIMIT_PER_60S)
    expect(limitedOk + limitedCut).toBeGreaterThanOrEqual(RATE_LIMIT_PER_60S)
    expect(limitedOk + limitedCut + limitedRefused).toBe(40)
    // Both nodes decided the limited tenant's calls against the one limit (answered or refused 429). Which node won the
    // last few slots is a race: on a loaded machine the restarted node, still cold, can lose all of them (seen at load
    // 7: every answered call on node 2), so that is only logged.
    const limitedDecidedBy = new Set(limitedCalls.flatMap((r) => r.attempts).filter((a) => ok(a) || a.status === 429).map((a) => servedBy(a.requestId)))
    expect(limitedDecidedBy).toEqual(new Set([0, 1]))
    const limitedNodes = new Set(limitedCalls.filter((r) => answered(r) !== undefined).map((r) => servedBy(answered(r)!.requestId)))

    const settled = await checkSettlements([...tenants, limited].map((t) => t.orgId), all)
    // A call billed whose answer was lost to the kill is one sent without an Idempotency-Key (a keyed one is
    // retried and replays that same receipt).
    expect(settled.billedUnanswered.filter((r) => r.spec.idempotencyKey !== undefined)).toEqual([])
    const chains = await verifyChains()

    // Webhooks: every receipt.signed event of the four tenants reaches the receiver at least once, and no attempt
    // (X-Service-Webhook-Delivery-Id) twice. Attempts the killed node had claimed come back when their lease
    // (WEBHOOK_TIMEOUT_MS + 60 s) runs out; the test moves those leases to now instead of waiting the minute.
    const hookOrgs = tenants.map((t) => t.orgId)
    const events = await query<{ id: string }>("SELECT id FROM outbox_events WHERE event = 'receipt.signed' AND org_id = ANY($1)", hookOrgs)
    expect(events).toHaveLength(settled.receipts - (await query("SELECT 1 FROM receipts_v2 WHERE org_id = $1", limited.orgId)).length)
    const abandoned = await query<{ id: string }>(
      `UPDATE webhook_deliveries d SET next_attempt_at = now()
       WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at > now() + interval '30 seconds'
         AND EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.finished_at IS NULL AND a.started_at <= to_timestamp($1 / 1000.0))
       RETURNING d.id::text AS id`, killedAt)
    const wanted = new Set(events.map((e) => e.id))
    const deadline = Date.now() + 30_000
    while ([...wanted].some((id) => receiver.forEvent(id).length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    const missing = [...wanted].filter((id) => receiver.forEvent(id).length === 0)
    expect(missing, "receipt.signed events never delivered").toEqual([])
    const attemptIds = receiver.received.map((d) => String(d.headers["x-service-webhook-delivery-id"]))
    expect(attemptIds.length - new Set(attemptIds).size, "an attempt delivered twice").toBe(0)
    const redelivered = [...wanted].filter((id) => receiver.forEvent(id).length > 1).length

    const ledger = await cliLedgerCheck()
    expect({ code: ledger.code, ok: ledger.json?.ok }, ledger.stderr).toEqual({ code: 0, ok: true })
    expect(ledger.json.usage_without_receipt.count).toBe(0)
    expect(ledger.json.receipts_without_usage.count).toBe(0)

    console.log(JSON.stringify({
      test: "multi-process SIGKILL",
      calls: all.length,
      sends: all.reduce((n, r) => n + r.attempts.length, 0),
      statuses: Object.fromEntries(statuses),
      cut_by_kill: cutOnce.length,
      idempotent_retries: retried.length,
      retries_replayed: retriedReplayed.length,
      cross_node_replays: crossNode.length,
      billed_answer_lost: settled.billedUnanswered.length,
      receipts: settled.receipts,
      usage_records: settled.usage,
      debits: settled.debits,
      chains: chains.chains,
      receipts_verified: chains.receiptsChecked,
      rate_limited: { limit: RATE_LIMIT_PER_60S, answered: limitedOk, refused: limitedRefused, cut: limitedCut, answered_by_nodes: [...limitedNodes] },
      webhook_events: wanted.size,
      webhook_deliveries: receiver.received.length,
      redelivered_after_kill: redelivered,
      other_deliveries: receiver.received.filter((d) => !wanted.has(d.body.event_id)).map((d) => d.body.event),
      leases_expired_early: abandoned.length,
      ledger_check: ledger.json.ok
    }))
  }, 300_000)

  it("two nodes hammering one nearly empty wallet (c=64): the balance never goes below minus one call's hold, chains never fork", async () => {
    const tenant = await newTenant("0.002")
    const [{ b: before }] = await query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", tenant.orgId)
    // The relay's holds live in Redis (layers/redis/admitScript.ts: hash hold id -> micros per organisation, under the
    // run's REDIS_PREFIX); the largest one seen while the load runs is "one call's hold".
    let maxHold = 0n
    let sampling = true
    const redis = new Redis(process.env.REDIS_URL!)
    const holdsKey = `${storage.env.REDIS_PREFIX ?? ""}holds:${tenant.orgId}`
    const sampler = (async () => {
      while (sampling) {
        for (const micros of await redis.hvals(holdsKey)) if (BigInt(micros) > maxHold) maxHold = BigInt(micros)
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
    const specs: Array<CallSpec> = Array.from({ length: 192 }, (_, i) => {
      const node = nodes[i % 2]!
      return { id: `spend-${i}`, tenant, stream: i % 3 === 0, maxTokens: 64, target: () => `http://127.0.0.1:${node.port}` }
    })
    const results = await runLoad(specs, 64)
    sampling = false
    await sampler
    await redis.quit()

    const statuses = new Map<number, number>()
    for (const r of results) statuses.set(r.attempts[0]!.status, (statuses.get(r.attempts[0]!.status) ?? 0) + 1)
    expect([...statuses.keys()].sort()).toEqual([200, 402])
    const [{ b: after }] = await query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", tenant.orgId)
    const [{ held }] = await query<{ held: string }>("SELECT held_micros::text AS held FROM wallets WHERE org_id = $1", tenant.orgId)
    expect(maxHold).toBeGreaterThan(0n)
    expect(BigInt(after!)).toBeGreaterThanOrEqual(-maxHold)
    expect(held).toBe("0")
    // Both nodes decided calls against the one wallet (admitted or refused with 402). Which node won the few calls
    // the wallet could pay for is a race: on a loaded machine one node can take them all, so that is only logged.
    const bothNodes = new Set(results.map((r) => servedBy(r.attempts[0]!.requestId)))
    expect(bothNodes).toEqual(new Set([0, 1]))
    const paidBy = new Set(results.filter((r) => ok(r.attempts[0]!)).map((r) => servedBy(r.attempts[0]!.requestId)))
    expect(paidBy.size).toBeGreaterThan(0)
    const settled = await checkSettlements([tenant.orgId], results)
    expect(settled.billedUnanswered).toEqual([])
    const [{ spent }] = await query<{ spent: string }>(
      "SELECT COALESCE(SUM(abs(amount_micros)), 0)::text AS spent FROM ledger_entries WHERE org_id = $1 AND kind = 'debit'", tenant.orgId)
    expect(BigInt(before!) - BigInt(spent!)).toBe(BigInt(after!))
    const chains = await verifyChains()
    const ledger = await run(checkLedger)
    expect(ledger.ok).toBe(true)
    console.log(JSON.stringify({
      test: "overspend across two nodes",
      statuses: Object.fromEntries(statuses),
      funded_micros: before,
      final_balance_micros: after,
      one_hold_micros: String(maxHold),
      served_by_nodes: [...bothNodes],
      paid_calls_served_by_nodes: [...paidBy],
      receipts: settled.receipts,
      chains: chains.chains
    }))
  }, 120_000)

  it("SIGTERM under load: calls and streams already accepted finish, new connections are refused while nginx routes to the other node, queued writes land, exit 0", async () => {
    const tenant = await newTenant("50")
    const node1 = nodes[0]!
    const draining = node1.process
    let sigtermAt = 0
    let drainingSeenAt = 0
    let exitedAt = 0
    let refusedDuringDrain: boolean | undefined
    const results: Array<CallResult> = []
    let n = 0
    // 32 callers through nginx, half streams, from before the signal until the node has exited and a second after.
    const callers = Array.from({ length: 32 }, async () => {
      while (exitedAt === 0 || Date.now() < exitedAt + 1000) {
        const i = n++
        results.push(await runCall({ id: `term-${i}`, tenant, stream: i % 2 === 0, target: () => nginx.url }))
      }
    })
    const stopper = (async () => {
      while (results.length < 40) await new Promise((r) => setTimeout(r, 20))
      sigtermAt = Date.now()
      draining.child.kill("SIGTERM")
      // Once the node says it drains (a loaded machine may take a moment to run the signal handler), and while it
      // still runs: a new connection to it is refused.
      while (!draining.output().includes("\"event\":\"shutdown_draining\"") && draining.child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 10))
      }
      drainingSeenAt = Date.now()
      if (draining.child.exitCode === null) refusedDuringDrain = await refusesConnections(node1.port)
      await exited(draining.child)
      exitedAt = Date.now()
    })()
    await stopper
    await Promise.all(callers)

    const attempts = results.map((r) => r.attempts[0]!)
    // The provider is a process of this loaded test machine: a call it answered too late is the gateway's own 502
    // upstream_error (with its X-Request-Id), nothing the shutdown did. Anything else not whole is: a reset (no
    // status), nginx's own 502 (no X-Request-Id: the node closed the connection), a stream without its trailer.
    const providerErrors = attempts.filter((a) => a.status === 502 && a.requestId !== null && a.code === "upstream_error")
    // The one loss SIGTERM cannot prevent (docs/deployment.md, "Stopping a node"): a connection nginx opened shortly
    // before the listener closed, completed by the kernel but not yet accepted by Node, is reset with the listener; nginx
    // had already written the POST on it, so it may not retry it and answers 502 itself (no X-Request-Id). The node never
    // saw such a call, so it is neither billed nor half-done. It was sent no later than the node was seen draining (the
    // node logs that line once its listener is closed: a connection opened later is refused and nginx sends its call to
    // the other node) and its 502 comes with the close, after the signal. It may have been sent before the signal: under
    // load nginx connects some milliseconds after the client sent, and a node short of CPU may not accept for a hundred
    // milliseconds (seen at load 8-10: a call sent 18 ms before SIGTERM, connected 4 ms after it, reset with the close 90
    // ms later). The drain itself never closes a connection it accepted (test/layers/http/DrainingHttpServer.test.ts), so
    // a reset on one would come later than this. Anything else not whole is a defect.
    const unacceptedAtClose = attempts.filter((a) =>
      a.status === 502 && a.requestId === null && a.startedAt <= drainingSeenAt && a.endedAt >= sigtermAt && a.endedAt <= drainingSeenAt + 1000
    )
    const failed = attempts.filter((a) => !ok(a) && !providerErrors.includes(a) && !unacceptedAtClose.includes(a))
    expect(failed.map((a) => ({ ...a, sinceSigterm: a.startedAt - sigtermAt, nginx: nginx.errorLog().split("\n").filter((l) => !l.includes("connect() failed") && !l.includes("temporarily disabled")) })), "calls that did not get a whole answer").toEqual([])
    expect(providerErrors.length).toBeLessThan(attempts.length / 10)
    // A handful at most: those are connections nginx opened within the same instant as the close.
    expect(unacceptedAtClose.length).toBeLessThanOrEqual(3)
    // The signal found calls in flight on the node, and they finished there.
    const inFlightAtSignal = attempts.filter((a) => a.startedAt < sigtermAt && a.endedAt > sigtermAt && servedBy(a.requestId) === 0)
    expect(inFlightAtSignal.length).toBeGreaterThan(0)
    const afterSignal = attempts.filter((a) => a.startedAt > sigtermAt + 100)
    expect(afterSignal.length).toBeGreaterThan(0)
    expect(draining.child.exitCode).toBe(0)
    expect(exitedAt - sigtermAt).toBeLessThan(GRACE_MS)
    expect(refusedDuringDrain).toBe(true)
    expect(draining.output()).toContain("\"event\":\"shutdown_drained\"")
    expect(draining.output()).not.toContain("shutdown_grace_expired")
    const settled = await checkSettlements([tenant.orgId], results)
    expect(settled.billedUnanswered).toEqual([])
    const ledger = await run(checkLedger)
    expect(ledger.ok).toBe(true)
    console.log(JSON.stringify({
      test: "SIGTERM under load",
      calls: attempts.length,
      answered_whole: attempts.filter(ok).length,
      provider_too_slow_502: providerErrors.length,
      reset_unaccepted_at_listener_close: unacceptedAtClose.length,
      in_flight_on_node_at_sigterm: inFlightAtSignal.length,
      streams_in_flight_at_sigterm: inFlightAtSignal.filter((a, i) => results[attempts.indexOf(a)]!.spec.stream && i >= 0).length,
      served_by_draining_node_after_sigterm: attempts.filter((a) => a.startedAt > sigtermAt && servedBy(a.requestId) === 0).length,
      new_connection_refused_while_draining: refusedDuringDrain,
      sigterm_to_exit_ms: exitedAt - sigtermAt,
      receipts: settled.receipts
    }))
    node1.retired.push(draining)
  }, 120_000)
})
