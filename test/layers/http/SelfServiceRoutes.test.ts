import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
beforeAll(async () => {
  // Each issuance test uses its own forwarded client address: the gateway trusts X-Forwarded-For only from the
  // loopback peer configured here, which is exactly how a deployment behind a proxy works.
  gw = await startTestGateway({ TRUSTED_PROXIES: "127.0.0.1,::ffff:127.0.0.1" })
})
afterAll(() => gw.close())

let nextIp = 1
const freshIp = () => `203.0.113.${nextIp++}`

const issue = (body: unknown, ip = freshIp(), raw?: string) =>
  fetch(`${gw.url}/api/v1/self-service/key`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: raw ?? JSON.stringify(body)
  })

describe("POST /api/v1/self-service/key", () => {
  it("issues an anonymous free-tier key from an empty object, with the spec's response fields", async () => {
    const res = await issue({})
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(body.api_key).toMatch(/^svc_[a-z2-7]{52}$/)
    expect(body.key_prefix).toBe(body.api_key.slice(0, 10))
    expect(body.tier).toBe("free")
    expect(body.limits.rate_limit_rpm).toBe(20)
    expect(body.limits.on_device).toContain("local proxy")
    // It names only client components that exist (no SDKs, MCP server or starter app yet).
    expect(`${body.limits.on_device} ${body.limits.relay} ${body.warning}`).not.toMatch(/SDK|MCP|starter/i)
    expect(typeof body.limits.relay).toBe("string")
    expect(body.warning).toMatch(/once/)
    const wallets = await gw.query<{ balance: string }>(
      "SELECT w.balance_micros::text AS balance FROM wallets w JOIN api_keys k ON k.org_id = w.org_id WHERE k.key_prefix = $1",
      body.key_prefix
    )
    expect(wallets).toEqual([{ balance: "0" }])
  })

  it("stores only the SHA-256 of the key, never the key itself", async () => {
    const { api_key, key_prefix } = await (await issue({ name: "hash check" })).json()
    const rows = await gw.query<Record<string, unknown>>("SELECT * FROM api_keys WHERE key_prefix = $1", key_prefix)
    expect(rows).toHaveLength(1)
    const { createHash } = await import("node:crypto")
    expect(rows[0].key_hash).toBe(createHash("sha256").update(api_key).digest("hex"))
    const dump = (rows: unknown) => JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v))
    const everything = dump(await gw.query("SELECT * FROM api_keys")) + dump(await gw.query("SELECT * FROM audit_log"))
    expect(everything).not.toContain(api_key)
    expect(everything).not.toContain(api_key.slice(4))
  })

  it("creates an unverified account for an e-mail, and answers 409 account_exists the second time", async () => {
    const first = await issue({ email: "Ada@Example.org", name: "Ada" })
    expect(first.status).toBe(201)
    const accounts = await gw.query<{ email: string; email_verified: boolean }>(
      "SELECT email, email_verified FROM accounts WHERE lower(email) = 'ada@example.org'"
    )
    expect(accounts).toEqual([{ email: "Ada@Example.org", email_verified: false }])
    const second = await issue({ email: "ada@example.org" })
    expect(second.status).toBe(409)
    expect(await second.json()).toEqual({ error: { code: "account_exists", message: "An account already exists for this e-mail address." } })
    expect(await gw.query("SELECT 1 FROM accounts WHERE lower(email) = 'ada@example.org'")).toHaveLength(1)
  })

  it("refuses the 6th issuance from one network within an hour with 429 rate_limited and Retry-After", async () => {
    const ip = freshIp()
    for (let i = 0; i < 5; i++) expect((await issue({}, ip)).status).toBe(201)
    const sixth = await issue({}, ip)
    expect(sixth.status).toBe(429)
    expect((await sixth.json()).error.code).toBe("rate_limited")
    const retryAfter = Number(sixth.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    // another network is unaffected
    expect((await issue({}, freshIp())).status).toBe(201)
  })

  it("counts IPv6 clients per /64", async () => {
    for (let i = 1; i <= 5; i++) expect((await issue({}, `2001:db8:1:2::${i}`)).status).toBe(201)
    expect((await issue({}, "2001:db8:1:2:ffff::9")).status).toBe(429)
    expect((await issue({}, "2001:db8:1:3::1")).status).toBe(201)
  })

  it("ignores X-Forwarded-For from an untrusted peer", async () => {
    const plain = await startTestGateway({ TRUSTED_PROXIES: "" })
    try {
      const call = (ip: string) =>
        fetch(`${plain.url}/api/v1/self-service/key`, { method: "POST", headers: { "x-forwarded-for": ip }, body: "{}" })
      for (let i = 0; i < 5; i++) expect((await call(`198.51.100.${i}`)).status).toBe(201)
      // all five came from the loopback socket whatever the header said
      expect((await call("198.51.100.99")).status).toBe(429)
    } finally {
      await plain.close()
    }
  })

  it.each([
    ["bad JSON", undefined, "{not json", "$"],
    ["an array", [], undefined, "$"],
    ["a wrong type", { email: 42 }, undefined, "email"],
    ["an unknown field", { emial: "x@y.zz" }, undefined, "emial"],
    ["an over-long name", { name: "n".repeat(101) }, undefined, "name"],
    ["an over-long e-mail", { email: `${"a".repeat(250)}@x.io` }, undefined, "email"],
    ["a malformed e-mail", { email: "not-an-email" }, undefined, "email"]
  ])("answers 400 invalid_request for %s and creates nothing", async (_label, body, raw, path) => {
    const before = await gw.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys")
    const res = await issue(body, freshIp(), raw)
    expect(res.status).toBe(400)
    const json = await res.json()
    expect(json.error.code).toBe("invalid_request")
    expect(json.error.details.path).toBe(path)
    expect(await gw.query("SELECT count(*)::int AS n FROM api_keys")).toEqual(before)
  })

  it("never grants a paid tier, whatever the body says", async () => {
    const res = await issue({ tier: "pro" })
    expect(res.status).toBe(400)
    const tiers = await gw.query<{ tier: string }>("SELECT DISTINCT tier FROM api_keys")
    expect(tiers).toEqual([{ tier: "free" }])
  })
})

describe("self-service issuance with an e-mail", () => {
  it("sends a verification link whose first use grants the $2 trial credit once, and records user.created", async () => {
    const email = `grace-${crypto.randomUUID().slice(0, 8)}@example.org`
    const res = await issue({ email })
    expect(res.status).toBe(201)
    const { key_prefix } = await res.json()
    const orgId = (await gw.query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", key_prefix))[0].org_id
    const mails = await gw.query<Record<string, unknown>>("SELECT to_address, body_text FROM mail_outbox")
    const mail = mails.map((m) => JSON.stringify(m)).find((m) => m.includes(email))
    expect(mail).toBeDefined()
    const link = /\/api\/v1\/account\/verify\?token=([A-Za-z0-9_-]+)/.exec(mail!)
    expect(link).not.toBeNull()
    const verify = () => fetch(`${gw.url}/api/v1/account/verify?token=${link![1]}`)
    expect((await verify()).status).toBeLessThan(300)
    expect((await verify()).status).toBeGreaterThanOrEqual(400)
    const balance = await gw.query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", orgId)
    expect(balance).toEqual([{ b: "2000000" }])
    const events = await gw.query<{ event: string }>("SELECT event FROM outbox_events WHERE org_id = $1 ORDER BY created_at", orgId)
    expect(events.map((e) => e.event)).toContain("user.created")
    expect(events.map((e) => e.event)).toContain("key.created")
  })
})
