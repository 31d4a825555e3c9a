// The admin API's SCIM token routes (layers/http/AdminRoutes.ts; docs/sso.md, The SCIM token): issue, list and
// revoke through a running gateway, so an embedded-storage gateway need not stop for them.
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg, createPortalToken } from "../../../layers/AdminOperations.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
let orgId: string
let adminToken: string
let adminTokenId: string
let memberToken: string

const run = <A>(effect: Effect.Effect<A, any, any>) => gw.runtime.runPromise(effect)
const admin = (method: "GET" | "POST", path: string, body?: unknown, bearer = adminToken) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
const scimUsers = (token: string) =>
  fetch(`${gw.url}/scim/v2/Users?filter=${encodeURIComponent('userName eq "nobody@example.org"')}`, { headers: { authorization: `Bearer ${token}` } })
const scimTokenRows = () => gw.query<{ id: string; token_hash: string }>("SELECT id, token_hash FROM scim_tokens ORDER BY id")
const scimAudit = () => gw.query<{ actor: string; action: string; target: string; org_id: string }>(
  "SELECT actor, action, target, org_id FROM audit_log WHERE action LIKE 'scim.token%' ORDER BY id")

beforeAll(async () => {
  gw = await startTestGateway()
  orgId = (await run(createOrg({ name: "Provisioned Inc" }))).org_id
  adminToken = (await run(createPortalToken({ org_id: orgId, abilities: ["ability:admin"] }))).token
  memberToken = (await run(createPortalToken({ org_id: orgId, abilities: ["ability:keys.read", "ability:keys.write", "abilities:write"] }))).token
  const [row] = await gw.query<{ id: string }>("SELECT id FROM portal_tokens WHERE token_hash = $1", createHash("sha256").update(adminToken).digest("hex"))
  adminTokenId = row.id
})
afterAll(() => gw.close())

describe("SCIM tokens through the admin API", () => {
  it("issue answers the token once (no-store, stored only as its SHA-256); the IdP can use it; revoke refuses it at once; each step audited", async () => {
    const issued = await admin("POST", "/api/admin/sso/scim-tokens", { org_id: orgId })
    expect(issued.status).toBe(200)
    expect(issued.headers.get("cache-control")).toBe("no-store")
    const body = await issued.json()
    expect(body).toEqual({ token_id: expect.stringMatching(/^sct_[0-9a-f]{32}$/), token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43}$/), org_id: orgId, scim_base_url: "PUBLIC_BASE_URL/scim/v2" })
    const stored = await scimTokenRows()
    expect(stored).toEqual([{ id: body.token_id, token_hash: createHash("sha256").update(body.token).digest("hex") }])
    expect(JSON.stringify(await gw.query("SELECT * FROM scim_tokens"))).not.toContain(body.token)

    // The identity provider's request with it succeeds, and is scoped to the organisation.
    const found = await scimUsers(body.token)
    expect(found.status).toBe(200)
    expect(found.headers.get("content-type")).toContain("application/scim+json")
    expect(await found.json()).toEqual({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] })

    const revoked = await admin("POST", "/api/admin/sso/scim-tokens/revoke", { org_id: orgId, token_id: body.token_id })
    expect(revoked.status).toBe(200)
    expect(await revoked.json()).toEqual({ token_id: body.token_id, org_id: orgId, revoked: true })
    const refused = await scimUsers(body.token)
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="scim"')
    expect(await refused.json()).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
      status: "401",
      detail: "A valid SCIM bearer token (scim_...) is required."
    })
    // Revoking it again: it is no longer an active token of the organisation.
    const again = await admin("POST", "/api/admin/sso/scim-tokens/revoke", { org_id: orgId, token_id: body.token_id })
    expect(again.status).toBe(404)
    expect((await again.json()).error).toMatchObject({ code: "not_found" })

    const actor = `portal-token:${adminTokenId}`
    expect(await scimAudit()).toEqual([
      { actor, action: "scim.token_issued", target: body.token_id, org_id: orgId },
      { actor, action: "scim.token_revoked", target: body.token_id, org_id: orgId }
    ])
  })

  it("list shows ids, prefixes and dates (last use included), revoked ones too, and never a token or its hash", async () => {
    const first = await (await admin("POST", "/api/admin/sso/scim-tokens", { org_id: orgId })).json()
    const second = await (await admin("POST", "/api/admin/sso/scim-tokens", { org_id: orgId })).json()
    expect((await scimUsers(first.token)).status).toBe(200)
    const res = await admin("GET", `/api/admin/sso/scim-tokens?org_id=${orgId}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("cache-control")).toBe("no-store")
    const text = await res.text()
    const list = JSON.parse(text)
    expect(list.org_id).toBe(orgId)
    const byId = new Map<string, any>(list.tokens.map((t: any) => [t.token_id, t]))
    const all = await gw.query<{ id: string; token_hash: string }>("SELECT id, token_hash FROM scim_tokens WHERE org_id = $1", orgId)
    expect([...byId.keys()].sort()).toEqual(all.map((r) => r.id).sort())
    expect(Object.keys(byId.get(first.token_id)).sort()).toEqual(["created_at", "last_used_at", "prefix", "revoked_at", "token_id"])
    expect(byId.get(first.token_id)).toMatchObject({ prefix: first.token.slice(0, 12), revoked_at: null, last_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    expect(byId.get(second.token_id)).toMatchObject({ prefix: second.token.slice(0, 12), revoked_at: null, last_used_at: null })
    expect(list.tokens.filter((t: any) => t.revoked_at !== null)).toHaveLength(1) // the first test's token
    for (const secret of [first.token, second.token, ...all.map((r) => r.token_hash)]) expect(text).not.toContain(secret)
  })

  it("an unknown organisation is 404 not_found; a bad body is 400 invalid_request naming the field; nothing is stored", async () => {
    const before = await scimTokenRows()
    const unknown = await admin("POST", "/api/admin/sso/scim-tokens", { org_id: "org_nope" })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: expect.objectContaining({ code: "not_found", message: "No such organisation." }) })
    const unknownList = await admin("GET", "/api/admin/sso/scim-tokens?org_id=org_nope")
    expect(unknownList.status).toBe(404)
    expect((await unknownList.json()).error.code).toBe("not_found")

    for (const [path, body, field] of [
      ["/api/admin/sso/scim-tokens", { org_id: 42 }, "org_id"],
      ["/api/admin/sso/scim-tokens", {}, "org_id"],
      ["/api/admin/sso/scim-tokens/revoke", { org_id: orgId }, "token_id"]
    ] as const) {
      const res = await admin("POST", path, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await res.json()).error, JSON.stringify(body)).toMatchObject({ code: "invalid_request", details: { path: expect.stringContaining(field) } })
    }
    const noOrg = await admin("GET", "/api/admin/sso/scim-tokens")
    expect(noOrg.status).toBe(400)
    expect((await noOrg.json()).error).toMatchObject({ code: "invalid_request", details: { path: "org_id" } })
    expect(await scimTokenRows()).toEqual(before)
  })

  it("a portal token without ability:admin gets 403 insufficient_ability: no token issued, none revoked, nothing listed", async () => {
    const live = await (await admin("POST", "/api/admin/sso/scim-tokens", { org_id: orgId })).json()
    const before = await scimTokenRows()
    const auditBefore = await scimAudit()
    for (const [method, path, body] of [
      ["POST", "/api/admin/sso/scim-tokens", { org_id: orgId }],
      ["GET", `/api/admin/sso/scim-tokens?org_id=${orgId}`, undefined],
      ["POST", "/api/admin/sso/scim-tokens/revoke", { org_id: orgId, token_id: live.token_id }]
    ] as const) {
      const res = await admin(method, path, body, memberToken)
      expect(res.status, path).toBe(403)
      const answer = await res.json()
      expect(answer.error, path).toMatchObject({ code: "insufficient_ability", required: ["ability:admin"] })
      expect(JSON.stringify(answer)).not.toContain(live.token_id)
    }
    expect(await scimTokenRows()).toEqual(before)
    expect(await scimAudit()).toEqual(auditBefore)
    expect((await scimUsers(live.token)).status).toBe(200)
  })
})
