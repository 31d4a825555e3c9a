import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../../programs/fake-provider.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fetchJwks, independentlyVerify } from "../../support/receipts.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

// Two pooled OpenAI keys and three pooled Anthropic keys in front of the fake provider. A recording proxy notes which
// key each upstream request carried and answers 429 for the keys told to fail, forwarding the others to the fake.
const OPENAI_KEYS = ["sk-pool-openai-AAAA1111", "sk-pool-openai-BBBB2222"]
const ANTHROPIC_KEYS = ["sk-ant-pool-CCCC3333", "sk-ant-pool-DDDD4444", "sk-ant-pool-EEEE5555"]
const ALL_KEYS = [...OPENAI_KEYS, ...ANTHROPIC_KEYS]
const GPT = "gpt-4o-mini"
const CLAUDE = "claude-haiku-4-5-20251001"

let fake: FakeProvider
let proxy: Server
let gw: TestGateway
let apiKey: string
let orgId: string
let seen: Array<string> = []
let failing = new Set<string>()
const logged: Array<string> = []
const consoleMethods = ["log", "info", "warn", "error", "debug"] as const
const originals = Object.fromEntries(consoleMethods.map((m) => [m, console[m]])) as Record<(typeof consoleMethods)[number], (...a: Array<unknown>) => void>

const keyOf = (headers: Record<string, string | string[] | undefined>) =>
  String(headers["x-api-key"] ?? String(headers.authorization ?? "").replace(/^Bearer /, ""))

beforeAll(async () => {
  fake = await startFakeProvider({ port: 0 })
  proxy = createServer(async (req, res) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    const key = keyOf(req.headers)
    seen.push(key)
    if (failing.has(key)) {
      res.writeHead(429, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "rate_limit_error", message: "slow down" } }))
      return
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v
    const upstream = await fetch(`${fake.url}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) })
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" })
    res.end(Buffer.from(await upstream.arrayBuffer()))
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  const dir = mkdtempSync(join(tmpdir(), "pr-pooled-keys-"))
  writeFileSync(join(dir, "openai"), `# two keys of one team\n${OPENAI_KEYS[0]}\n\n${OPENAI_KEYS[1]}\n`, { mode: 0o600 })
  writeFileSync(join(dir, "anthropic"), ANTHROPIC_KEYS.join("\r\n"), { mode: 0o600 })
  // Everything the gateway logs during the tests, at the most verbose level, is searched for key material.
  for (const m of consoleMethods) console[m] = (...args: Array<unknown>) => void logged.push(args.map((a) => typeof a === "string" ? a : JSON.stringify(a)).join(" "))
  gw = await startTestGateway({
    LOG_LEVEL: "debug",
    PROVIDER_OPENAI_BASE_URL: proxyUrl,
    PROVIDER_OPENAI_API_KEY_FILE: join(dir, "openai"),
    PROVIDER_ANTHROPIC_BASE_URL: proxyUrl,
    PROVIDER_ANTHROPIC_API_KEY_FILE: join(dir, "anthropic"),
    PROVIDER_COOLDOWN_MS: "60000"
  })
  ;({ apiKey, orgId } = await fundedKey(gw))
})
afterAll(async () => {
  for (const m of consoleMethods) console[m] = originals[m]
  await gw?.close()
  await new Promise((resolve) => proxy.close(resolve))
  await fake.close()
})
beforeEach(() => {
  seen = []
  failing = new Set()
})

const call = async (model: string) => {
  const text = JSON.stringify({ model, max_tokens: 16, messages: [{ role: "user", content: "hi <PERSON_1>" }] })
  return fetch(`${gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", text)) },
    body: text
  })
}
const receiptOf = (res: Response) => JSON.parse(Buffer.from(res.headers.get("x-service-receipt-v2")!, "base64").toString("utf8"))
const usageCount = async () =>
  (await gw.query<{ n: number | string }>("SELECT count(*) AS n FROM usage_records WHERE org_id = $1", orgId)).map((r) => Number(r.n))[0]
const expectNoKeyMaterial = (text: string) => {
  for (const key of ALL_KEYS) {
    expect(text).not.toContain(key)
    expect(text).not.toContain(key.slice(0, 12))
  }
}

describe("pooled keys (several keys in PROVIDER_<SLUG>_API_KEY_FILE)", () => {
  it("spreads calls across the keys in turn, one upstream request and one receipt per call", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) {
      const res = await call(GPT)
      statuses.push(res.status)
      expect(res.headers.get("x-service-routing-decision")).toBeNull()
      expect(receiptOf(res).routing_decision).toBeUndefined()
      await res.text()
    }
    expect(statuses).toEqual([200, 200, 200, 200])
    expect(seen).toHaveLength(4)
    expect(new Set(seen.slice(0, 2))).toEqual(new Set(OPENAI_KEYS))
    expect(seen[2]).toBe(seen[0])
    expect(seen[3]).toBe(seen[1])
  })

  it("retries a 429ing key on the other key, bills once, then skips the failed key for the cool-down", async () => {
    failing.add(OPENAI_KEYS[0]!)
    const rowsBefore = await usageCount()
    const balanceBefore = await balanceMicros(gw, orgId)
    const results: Array<{ status: number; receipt: any; header: string | null; body: string }> = []
    for (let i = 0; i < 3; i++) {
      const res = await call(GPT)
      results.push({ status: res.status, receipt: receiptOf(res), header: res.headers.get("x-service-routing-decision"), body: await res.text() })
    }
    expect(results.map((r) => r.status)).toEqual([200, 200, 200])
    // The failing key was tried at most once: afterwards it cools down and the other key answers directly.
    expect(seen.filter((k) => k === OPENAI_KEYS[0])).toHaveLength(seen.length - 3)
    expect(seen.filter((k) => k === OPENAI_KEYS[1])).toHaveLength(3)
    // After four calls the rotation starts this one at key 1 (the failing one): it is retried on key 2.
    expect(seen).toEqual([OPENAI_KEYS[0], OPENAI_KEYS[1], OPENAI_KEYS[1], OPENAI_KEYS[1]])
    const decision = { from: "openai", to: "openai", chosen_model: GPT, classifier: "fallback-v1", savings_pct: 0, strategy: "fallback", key_slot: "key 2 of 2" }
    expect(JSON.parse(results[0]!.header!)).toEqual(decision)
    expect(results[0]!.receipt.routing_decision).toEqual(decision)
    expect(await independentlyVerify(results[0]!.receipt, await fetchJwks(gw.url))).toBe(true)
    expect(results.slice(1).map((r) => r.header)).toEqual([null, null])
    // One usage record and one debit per call, none for the 429: the retried call costs what the others cost.
    expect(await usageCount()).toBe(rowsBefore! + 3)
    const debits = await gw.query<{ c: number | string }>(
      "SELECT billed_micros::text AS c FROM usage_records WHERE org_id = $1 ORDER BY finished_at DESC LIMIT 3", orgId)
    expect(new Set(debits.map((d) => String(d.c))).size).toBe(1)
    expect(await balanceMicros(gw, orgId)).toBe(balanceBefore - 3n * BigInt(debits[0]!.c))
    for (const r of results) expectNoKeyMaterial(JSON.stringify(r))
  })

  it("answers 502 listing each key tried when every key of the provider fails, billing nothing", async () => {
    for (const k of ANTHROPIC_KEYS) failing.add(k)
    const rowsBefore = await usageCount()
    const balanceBefore = await balanceMicros(gw, orgId)
    const res = await call(CLAUDE)
    expect(res.status).toBe(502)
    const text = await res.text()
    const body = JSON.parse(text)
    expect(body.error.code).toBe("upstream_error")
    expect(body.error.attempts).toHaveLength(3)
    expect(body.error.attempts.map((a: any) => a.key_slot).sort()).toEqual(["key 1 of 3", "key 2 of 3", "key 3 of 3"])
    for (const a of body.error.attempts) expect(a).toMatchObject({ provider: "anthropic", model: CLAUDE, provider_status: 429 })
    expect(new Set(seen)).toEqual(new Set(ANTHROPIC_KEYS))
    expect(seen).toHaveLength(3)
    expect(await usageCount()).toBe(rowsBefore)
    expect(await balanceMicros(gw, orgId)).toBe(balanceBefore)
    expectNoKeyMaterial(text)

    // Every key is cooling now: the next call still goes out, on the key that failed least recently.
    failing.clear()
    seen = []
    const again = await call(CLAUDE)
    expect(again.status).toBe(200)
    await again.text()
    expect(seen).toHaveLength(1)
  })

  it("logs no key material", () => {
    expect(logged.length).toBeGreaterThan(0)
    expectNoKeyMaterial(logged.join(""))
  })
})
