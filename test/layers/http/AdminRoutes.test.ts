// The admin view's directory routes (GET /api/admin/orgs, /keys, /chains) and the operator flag that lets a person's
// portal session use them (layers/AdminDirectory.ts, AdminOperations.setOperator).
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg, createPortalToken, setOperator } from "../../../layers/AdminOperations.ts"
import { asApiError } from "../../../layers/http/domainErrors.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
let adminToken: string
let memberToken: string
let orgIds: Array<string>
const mintedKeys: Array<string> = []
const OPERATOR = "operator@example.org"
const PASSWORD = "operator password 1"

const run = <A>(effect: Effect.Effect<A, any, any>) => gw.runtime.runPromise(effect)
const get = (path: string, auth: { bearer?: string; cookie?: string }) =>
  fetch(`${gw.url}${path}`, { headers: { ...(auth.bearer ? { authorization: `Bearer ${auth.bearer}` } : {}), ...(auth.cookie ? { cookie: auth.cookie } : {}) } })

const login = async () => {
  const res = await fetch(`${gw.url}/api/v1/portal/login`, { method: "POST", body: JSON.stringify({ email: OPERATOR, password: PASSWORD }) })
  expect(res.status).toBe(200)
  return { cookie: res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), json: await res.json() }
}

/** Every page of a list, following next_cursor; proves the pages neither overlap nor skip. */
const allPages = async (path: string, field: string, bearer: string) => {
  const seen: Array<any> = []
  let cursor: string | null = null
  let pages = 0
  do {
    const sep = path.includes("?") ? "&" : "?"
    const res = await get(`${path}${sep}limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, { bearer })
    expect(res.status).toBe(200)
    expect(res.headers.get("cache-control")).toBe("no-store")
    const body = await res.json()
    expect(body[field].length).toBeLessThanOrEqual(2)
    seen.push(...body[field])
    cursor = body.next_cursor
    pages++
  } while (cursor !== null && pages < 50)
  return { seen, pages }
}

beforeAll(async () => {
  gw = await startTestGateway()
  const signUp = await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify({ email: OPERATOR, password: PASSWORD, organisation_name: "Operations" }) })
  expect(signUp.status).toBe(201)
  orgIds = []
  for (const name of ["Alpha", "Beta", "Gamma"]) orgIds.push((await run(createOrg({ name }))).org_id)
  orgIds.push((await run(createOrg({ name: "Alpha EU", parent_id: orgIds[0] }))).org_id)
  adminToken = (await run(createPortalToken({ org_id: orgIds[0], abilities: ["ability:admin"] }))).token
  memberToken = (await run(createPortalToken({ org_id: orgIds[0], abilities: ["ability:keys.read", "ability:keys.write", "ability:billing.read", "abilities:write"] }))).token
  // The member token reaches its own organisation and its sub-organisation.
  for (const [org, name] of [[orgIds[0], "a1"], [orgIds[0], "a2"], [orgIds[3], "eu1"]] as const) {
    const res = await fetch(`${gw.url}/api/keys`, { method: "POST", headers: { authorization: `Bearer ${memberToken}`, "content-type": "application/json" }, body: JSON.stringify({ name, org_id: org }) })
    expect(res.status).toBe(201)
    mintedKeys.push((await res.json()).api_key)
  }
  // Keys of organisations the member token cannot reach: made with their own tokens.
  for (const [org, name] of [[orgIds[1], "b1"], [orgIds[2], "g1"]] as const) {
    const token = (await run(createPortalToken({ org_id: org, abilities: ["ability:keys.write"] }))).token
    const res = await fetch(`${gw.url}/api/keys`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ name }) })
    expect(res.status).toBe(201)
    mintedKeys.push((await res.json()).api_key)
  }
})
afterAll(() => gw.close())

describe("admin directory", () => {
  it("lists every organisation over keyset pages (no overlap, none skipped) with balance, active keys and members", async () => {
    const { seen, pages } = await allPages("/api/admin/orgs", "organisations", adminToken)
    const all = await gw.query<{ id: string }>("SELECT id FROM organisations")
    expect(pages).toBeGreaterThanOrEqual(3)
    expect(seen.map((o) => o.org_id).sort()).toEqual(all.map((o) => o.id).sort())
    expect(new Set(seen.map((o) => o.org_id)).size).toBe(seen.length)
    // newest first
    const times = seen.map((o) => Date.parse(o.created_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    const alpha = seen.find((o) => o.org_id === orgIds[0])
    expect(alpha).toEqual({ org_id: orgIds[0], name: "Alpha", parent_id: null, created_at: expect.any(String), balance_micros: 0, balance_usd: "0.000000", keys_active: 2, members: 0 })
    expect(seen.find((o) => o.org_id === orgIds[3])).toMatchObject({ name: "Alpha EU", parent_id: orgIds[0], keys_active: 1 })
    expect(seen.find((o) => o.name === "Operations")).toMatchObject({ members: 1, balance_micros: 0 })

    const children = await (await get(`/api/admin/orgs?parent_id=${orgIds[0]}`, { bearer: adminToken })).json()
    expect(children.organisations.map((o: any) => o.org_id)).toEqual([orgIds[3]])
  })

  it("lists key metadata across organisations, filtered by organisation or status, never a key or its hash", async () => {
    const { seen } = await allPages("/api/admin/keys", "keys", adminToken)
    expect(seen).toHaveLength(5)
    expect(seen.map((k) => k.name).sort()).toEqual(["a1", "a2", "b1", "eu1", "g1"])
    expect(Object.keys(seen[0]).sort()).toEqual(["created_at", "id", "key_prefix", "last_used_at", "models", "name", "org_id", "org_name", "permissions", "revoked_at", "status", "tier"])
    const hashes = await gw.query<{ key_hash: string }>("SELECT key_hash FROM api_keys")
    const text = JSON.stringify(seen)
    for (const key of mintedKeys) expect(text).not.toContain(key.slice(10))
    for (const { key_hash } of hashes) expect(text).not.toContain(key_hash)

    const beta = await (await get(`/api/admin/keys?org_id=${orgIds[1]}`, { bearer: adminToken })).json()
    expect(beta.keys.map((k: any) => [k.name, k.org_name])).toEqual([["b1", "Beta"]])
    const revokedId = seen.find((k) => k.name === "g1").id
    await gw.query("UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = $1", revokedId)
    const revoked = await (await get("/api/admin/keys?status=revoked", { bearer: adminToken })).json()
    expect(revoked.keys.map((k: any) => k.id)).toEqual([revokedId])
    expect(revoked.keys[0].revoked_at).toEqual(expect.any(String))
  })

  it("answers the chain verifier's state: chains with their open incident, counts, and this process's last pass", async () => {
    await gw.query("INSERT INTO receipt_chains (chain_id, org_id, kind, last_seq, last_hash) VALUES ('tenant-aaa', $1, 'v1', 0, 'x'), ('tenant-bbb', $2, 'v1', 3, 'y'), ('tenant-ccc', $1, 'v1', 0, 'z')", orgIds[0], orgIds[1])
    await gw.query("INSERT INTO chain_incidents (chain_id, org_id, seq, reason) VALUES ('tenant-bbb', $1, 2, 'receipt seq 2 is missing')", orgIds[1])
    const { seen } = await allPages("/api/admin/chains", "chains", adminToken)
    expect(seen.map((c) => c.chain_id)).toEqual(["tenant-aaa", "tenant-bbb", "tenant-ccc"])
    expect(seen[1]).toEqual({
      chain_id: "tenant-bbb", org_id: orgIds[1], kind: "v1", last_seq: 3,
      incident: { id: expect.any(String), seq: 2, reason: "receipt seq 2 is missing", detected_at: expect.any(String) }
    })
    expect(seen[0].incident).toBeNull()
    const broken = await (await get("/api/admin/chains?state=broken", { bearer: adminToken })).json()
    expect(broken.chains.map((c: any) => c.chain_id)).toEqual(["tenant-bbb"])
    expect(broken.summary).toMatchObject({ chains: 3, open_incidents: 1, repaired_incidents: 0 })
    // The verifier's background interval is 60 s: no pass yet in this fresh process.
    expect(broken.summary.last_pass).toBeNull()
  })

  it("refuses bad paging and filter input with 400 invalid_request naming the parameter", async () => {
    for (const [path, param] of [
      ["/api/admin/orgs?limit=0", "limit"],
      ["/api/admin/orgs?limit=201", "limit"],
      ["/api/admin/keys?limit=abc", "limit"],
      ["/api/admin/orgs?cursor=garbage", "cursor"],
      [`/api/admin/keys?cursor=${Buffer.from(JSON.stringify(["not a time", "k"])).toString("base64url")}`, "cursor"],
      [`/api/admin/chains?cursor=${Buffer.from(JSON.stringify(["a", "b"])).toString("base64url")}`, "cursor"],
      ["/api/admin/keys?status=deleted", "status"],
      ["/api/admin/keys?org_id=x'%20OR%201=1", "org_id"],
      ["/api/admin/chains?state=sideways", "state"]
    ] as const) {
      const res = await get(path, { bearer: adminToken })
      expect(res.status, path).toBe(400)
      const body = await res.json()
      expect(body.error, path).toMatchObject({ code: "invalid_request", details: { path: param } })
    }
  })

  it("refuses anyone without ability:admin: 403 insufficient_ability and nothing listed; a gateway key or no credential 401", async () => {
    for (const path of ["/api/admin/orgs", "/api/admin/keys", "/api/admin/chains"]) {
      const res = await get(path, { bearer: memberToken })
      expect(res.status, path).toBe(403)
      const body = await res.json()
      expect(body.error).toMatchObject({ code: "insufficient_ability", required: ["ability:admin"] })
      expect(Object.keys(body)).toEqual(["error"])
      expect(JSON.stringify(body)).not.toContain("Beta")
      const key = await get(path, { bearer: mintedKeys[0] })
      expect(key.status).toBe(401)
      expect((await key.json()).error.code).toBe("portal_auth_required")
      expect((await get(path, {})).status).toBe(401)
    }
  })
})

describe("operator flag", () => {
  it("a signed-in person gets the admin view only while the operator flag is set, each change audited", async () => {
    const before = await login()
    expect(before.json.abilities).not.toContain("ability:admin")
    const refused = await get("/api/admin/orgs", { cookie: before.cookie })
    expect(refused.status).toBe(403)
    expect((await refused.json()).error.code).toBe("insufficient_ability")

    // Unverified addresses cannot be granted; nothing changes.
    const unverified = await run(Effect.flip(setOperator({ email: OPERATOR, action: "grant" }, "cli")))
    // The operation's own refusal, answered as the admin API and the CLI answer it (layers/http/domainErrors.ts).
    expect(unverified._tag).toBe("OperatorEmailNotVerified")
    expect(asApiError(unverified)).toMatchObject({
      status: 409,
      code: "email_not_verified",
      message: "Only an account with a verified e-mail address can be made an operator."
    })
    expect(await gw.query("SELECT operator_granted_at FROM accounts WHERE email = $1", OPERATOR)).toEqual([{ operator_granted_at: null }])

    await gw.query("UPDATE accounts SET email_verified = true WHERE email = $1", OPERATOR)
    expect(await run(setOperator({ email: OPERATOR.toUpperCase(), action: "grant" }, "cli"))).toMatchObject({ operator: true, changed: true })
    expect(await run(setOperator({ email: OPERATOR, action: "grant" }, "cli"))).toMatchObject({ operator: true, changed: false })
    // The session opened before the grant sees the admin view at once.
    const granted = await get("/api/admin/orgs", { cookie: before.cookie })
    expect(granted.status).toBe(200)
    expect((await granted.json()).organisations.length).toBeGreaterThanOrEqual(5)
    const me = await (await get("/api/v1/account", { cookie: before.cookie })).json()
    expect(me.abilities).toContain("ability:admin")
    expect((await login()).json.abilities).toContain("ability:admin")

    expect(await run(setOperator({ email: OPERATOR, action: "revoke" }, "cli"))).toMatchObject({ operator: false, changed: true })
    expect((await get("/api/admin/keys", { cookie: before.cookie })).status).toBe(403)

    const audit = await gw.query<{ actor: string; action: string; target: string; details: unknown }>(
      "SELECT actor, action, target, details FROM audit_log WHERE action LIKE 'account.operator%' ORDER BY id")
    const [account] = await gw.query<{ id: string }>("SELECT id FROM accounts WHERE email = $1", OPERATOR)
    expect(audit).toEqual([
      { actor: "cli", action: "account.operator_granted", target: account.id, details: null },
      { actor: "cli", action: "account.operator_revoked", target: account.id, details: null }
    ])
    expect(JSON.stringify(audit)).not.toContain(OPERATOR)
  })

  it("POST /api/admin/portal-tokens refuses unknown abilities (400, naming them) and a missing organisation (404); nothing stored", async () => {
    const post = (body: unknown) =>
      fetch(`${gw.url}/api/admin/portal-tokens`, { method: "POST", headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }, body: JSON.stringify(body) })
    const before = await gw.query<{ n: number }>("SELECT count(*)::int AS n FROM portal_tokens")
    const unknown = await post({ org_id: orgIds[1], abilities: ["ability:keys.read", "ability:nope", "ability:neither"] })
    expect(unknown.status).toBe(400)
    expect(await unknown.json()).toEqual({
      error: { code: "invalid_request", message: "Unknown abilities: ability:nope, ability:neither", details: { path: "abilities" } }
    })
    const missing = await post({ org_id: "org_does_not_exist", abilities: ["ability:keys.read"] })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ error: { code: "not_found", message: "No such organisation." } })
    expect(await gw.query<{ n: number }>("SELECT count(*)::int AS n FROM portal_tokens")).toEqual(before)
  })

  it("POST /api/admin/keys/revoke refuses an unknown prefix (404) and one several keys share (409), revoking nothing", async () => {
    const post = (body: unknown) =>
      fetch(`${gw.url}/api/admin/keys/revoke`, { method: "POST", headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }, body: JSON.stringify(body) })
    const unknown = await post({ key_prefix: "svc_zzzzzzzz" })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: { code: "not_found", message: "No key has this prefix." } })
    const [a, b] = await gw.query<{ key_prefix: string }>("SELECT key_prefix FROM api_keys WHERE status = 'active' ORDER BY created_at LIMIT 2")
    await gw.query("UPDATE api_keys SET key_prefix = $1 WHERE key_prefix = $2", a.key_prefix, b.key_prefix)
    try {
      const ambiguous = await post({ key_prefix: a.key_prefix })
      expect(ambiguous.status).toBe(409)
      expect(await ambiguous.json()).toEqual({ error: { code: "ambiguous_prefix", message: "Several keys share this prefix." } })
      expect(await gw.query("SELECT status FROM api_keys WHERE key_prefix = $1", a.key_prefix)).toEqual([{ status: "active" }, { status: "active" }])
    } finally {
      await gw.query("UPDATE api_keys SET key_prefix = $1 WHERE id = (SELECT id FROM api_keys WHERE key_prefix = $2 ORDER BY created_at DESC LIMIT 1)", b.key_prefix, a.key_prefix)
    }
  })

  it("POST /api/admin/accounts/operator: the admin API the CLI uses; bad input and unknown addresses refused", async () => {
    const post = (body: unknown, bearer = adminToken) =>
      fetch(`${gw.url}/api/admin/accounts/operator`, { method: "POST", headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: JSON.stringify(body) })
    const ok = await post({ email: OPERATOR, action: "grant" })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ operator: true, changed: true })
    const [row] = await gw.query<{ actor: string }>("SELECT actor FROM audit_log WHERE action = 'account.operator_granted' ORDER BY id DESC LIMIT 1")
    expect(row.actor).toMatch(/^portal-token:/)

    for (const [body, code] of [
      [{ email: "nobody@example.org", action: "grant" }, "not_found"],
      [{ email: OPERATOR, action: "promote" }, "invalid_request"],
      [{ action: "grant" }, "invalid_request"]
    ] as const) {
      const res = await post(body)
      expect((await res.json()).error.code).toBe(code)
    }
    const denied = await post({ email: OPERATOR, action: "revoke" }, memberToken)
    expect(denied.status).toBe(403)
    expect((await gw.query("SELECT operator_granted_at IS NOT NULL AS operator FROM accounts WHERE email = $1", OPERATOR))[0]).toEqual({ operator: true })
  })
})
