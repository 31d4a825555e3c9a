import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg, createPortalToken } from "../../../layers/AdminOperations.ts"
import { asApiError } from "../../../layers/http/domainErrors.ts"
import { KeyManagement } from "../../../services/KeyManagement.ts"
import { Keys } from "../../../services/Keys.ts"
import { Organisations } from "../../../services/Organisations.ts"
import { UPSTREAM_PROVIDERS } from "../../../src/providers/catalogue.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
let orgId: string
let writer: string
let reader: string
let nobody: string
let admin: string

const run = <A>(effect: Effect.Effect<A, any, any>) => gw.runtime.runPromise(effect)
const token = (org: string, abilities: Array<string>) =>
  run(createPortalToken({ org_id: org, abilities })).then((t) => t.token)

beforeAll(async () => {
  gw = await startTestGateway()
  orgId = (await run(createOrg({ name: "Acme" }))).org_id
  writer = await token(orgId, ["ability:keys.write", "ability:keys.read"])
  reader = await token(orgId, ["ability:keys.read"])
  nobody = await token(orgId, ["ability:billing.read"])
  admin = await token(orgId, ["ability:admin"])
})
afterAll(() => gw.close())

const call = (method: string, path: string, bearer: string | undefined, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })

/** Proves whether a key works by authenticating it exactly as the relay routes do. */
const authenticate = (apiKey: string) =>
  run(Effect.flatMap(Effect.service(Keys), (keys) => keys.authenticate(apiKey)).pipe(
    Effect.map((p) => ({ ok: true as const, orgId: p.orgId, permissions: p.permissions })),
    Effect.mapError(asApiError),
    Effect.catchTag("ApiError", (e) => Effect.succeed({ ok: false as const, status: e.status, code: e.code }))
  ))

const events = (keyId: string) =>
  gw.query<{ event: string; data: Record<string, unknown> }>(
    "SELECT event, data FROM outbox_events WHERE data->>'key_id' = $1 ORDER BY created_at, event",
    keyId
  )

describe("key management over HTTP", () => {
  it("create -> use -> update -> rotate -> revoke, with events and audit rows", async () => {
    const created = await call("POST", "/api/keys", writer, { name: "ci", permissions: ["completions"] })
    expect(created.status).toBe(201)
    const key = await created.json()
    expect(key.api_key).toMatch(/^svc_[a-z2-7]{52}$/)
    expect(key).toMatchObject({ key_prefix: key.api_key.slice(0, 10), name: "ci", tier: "free", permissions: ["completions"] })
    expect(await authenticate(key.api_key)).toEqual({ ok: true, orgId, permissions: ["completions"] })

    const listed = await (await call("GET", "/api/v1/keys", reader)).json()
    const row = listed.keys.find((k: any) => k.id === key.id)
    expect(row).toMatchObject({ key_prefix: key.key_prefix, name: "ci", status: "active", permissions: ["completions"], models: null })
    expect(typeof row.created_at).toBe("string")
    expect(JSON.stringify(listed)).not.toContain(key.api_key.slice(4))
    expect(Object.keys(row)).not.toContain("api_key")
    expect(Object.keys(row)).not.toContain("key_hash")

    const patched = await call("PATCH", `/api/keys/${key.id}`, writer, { permissions: ["messages", "completions"] })
    expect(patched.status).toBe(200)
    expect(await patched.json()).toMatchObject({ name: "ci", permissions: ["messages", "completions"] })
    expect((await authenticate(key.api_key)).ok).toBe(true)

    const rotated = await call("POST", `/api/keys/${key.id}/rotate`, writer)
    expect(rotated.status).toBe(201)
    const next = await rotated.json()
    expect(next.api_key).not.toBe(key.api_key)
    expect(next).toMatchObject({ name: "ci", permissions: ["messages", "completions"], replaces: key.id })
    expect(await authenticate(key.api_key)).toEqual({ ok: false, status: 401, code: "key_revoked" })
    expect((await authenticate(next.api_key)).ok).toBe(true)
    // a rotated key cannot be rotated or edited again
    expect((await call("POST", `/api/keys/${key.id}/rotate`, writer)).status).toBe(409)

    const revoked = await call("POST", `/api/keys/${next.id}/revoke`, writer)
    expect(revoked.status).toBe(200)
    expect((await revoked.json()).status).toBe("revoked")
    expect(await authenticate(next.api_key)).toEqual({ ok: false, status: 401, code: "key_revoked" })

    expect((await events(key.id)).map((e) => e.event)).toEqual(["key.created", "key.rotated"])
    expect((await events(key.id))[1].data).toMatchObject({ new_key_id: next.id, trigger: "manual" })
    expect((await events(next.id)).map((e) => e.event)).toEqual(["key.revoked"])
    const outboxDump = JSON.stringify(await gw.query("SELECT data FROM outbox_events"))
    expect(outboxDump).not.toContain(next.api_key.slice(4))

    const audit = await gw.query<{ actor: string; action: string; target: string; org_id: string }>(
      "SELECT actor, action, target, org_id FROM audit_log WHERE target IN ($1, $2) ORDER BY id",
      key.id,
      next.id
    )
    expect(audit.map((a) => [a.action, a.target])).toEqual([
      ["key.created", key.id],
      ["key.updated", key.id],
      ["key.rotated", key.id],
      ["key.revoked", next.id]
    ])
    expect(new Set(audit.map((a) => a.actor)).size).toBe(1)
    expect(audit[0].actor).toMatch(/^portal-token:ptk_/)
    expect(audit.every((a) => a.org_id === orgId)).toBe(true)

    const viaApi = await call("GET", `/api/v1/audit?org_id=${orgId}&limit=10`, admin)
    expect(viaApi.status).toBe(200)
    const entries = (await viaApi.json()).entries
    expect(entries.filter((e: any) => e.target === key.id).map((e: any) => e.action)).toEqual(["key.rotated", "key.updated", "key.created"])
  })

  it("PUT replaces every editable field, PATCH only the given ones", async () => {
    const model = UPSTREAM_PROVIDERS[0].models[0].id
    const key = await (await call("POST", "/api/keys", writer, { name: "a", permissions: ["messages"], models: [model] })).json()
    expect(key.models).toEqual([model])
    const put = await (await call("PUT", `/api/keys/${key.id}`, writer, { name: "b" })).json()
    expect(put).toMatchObject({ name: "b", permissions: [], models: null })
    const patch = await (await call("PATCH", `/api/keys/${key.id}`, writer, { models: [model] })).json()
    expect(patch).toMatchObject({ name: "b", permissions: [], models: [model] })
  })

  it.each([
    [{ permissions: ["admin"] }, "permissions[0]"],
    [{ permissions: "completions" }, "permissions"],
    [{ models: ["no-such-model-xyz"] }, "models[0]"],
    [{ models: [42] }, "models[0]"],
    [{ rotation_days: 0 }, "rotation_days"],
    [{ tier: "pro" }, "tier"]
  ])("refuses %j with 400 invalid_request and creates nothing", async (body, path) => {
    const before = await gw.query("SELECT id FROM api_keys")
    const res = await call("POST", "/api/keys", writer, body)
    expect(res.status).toBe(400)
    const json = await res.json()
    expect(json.error.code).toBe("invalid_request")
    expect(json.error.details.path).toBe(path)
    expect(await gw.query("SELECT id FROM api_keys")).toHaveLength(before.length)
  })

  it("keeps organisations apart, and lets a parent manage its sub-organisation's keys", async () => {
    const own = await (await call("POST", "/api/keys", writer, { name: "mine" })).json()
    const otherOrg = (await run(createOrg({ name: "Other" }))).org_id
    const stranger = await token(otherOrg, ["ability:keys.write", "ability:keys.read"])
    expect((await call("POST", `/api/keys/${own.id}/revoke`, stranger)).status).toBe(404)
    expect((await call("PATCH", `/api/keys/${own.id}`, stranger, { name: "x" })).status).toBe(404)
    const theirs = await (await call("GET", "/api/v1/keys", stranger)).json()
    expect(theirs.keys).toEqual([])
    expect((await call("POST", "/api/keys", stranger, { org_id: orgId })).status).toBe(404)

    const { orgId: subOrg } = await run(Effect.flatMap(Effect.service(Organisations), (o) => o.create({ name: "Acme EU", parentId: orgId })))
    const subKey = await call("POST", "/api/keys", writer, { org_id: subOrg, name: "eu" })
    expect(subKey.status).toBe(201)
    const minted = await subKey.json()
    expect((await authenticate(minted.api_key))).toMatchObject({ ok: true, orgId: subOrg })
    const subList = await (await call("GET", `/api/v1/keys?org_id=${subOrg}`, reader)).json()
    expect(subList.keys.map((k: any) => k.id)).toEqual([minted.id])
    // the sub-organisation's own token does not reach its parent
    const subToken = await token(subOrg, ["ability:keys.read"])
    expect((await call("GET", `/api/v1/keys?org_id=${orgId}`, subToken)).status).toBe(404)
  })

  it("marks keys due under the rotation policy and fires key.rotated with trigger policy when rotated", async () => {
    const key = await (await call("POST", "/api/keys", writer, { name: "policy", rotation_days: 30 })).json()
    expect(key.rotation_days).toBe(30)
    const markDue = Effect.flatMap(Effect.service(KeyManagement), (k) => k.markDueRotations)
    expect(await run(markDue)).toBe(0)
    await gw.query("UPDATE api_keys SET created_at = now() - interval '31 days' WHERE id = $1", key.id)
    expect(await run(markDue)).toBe(1)
    expect(await run(markDue)).toBe(0)
    const listed = (await (await call("GET", "/api/v1/keys", reader)).json()).keys.find((k: any) => k.id === key.id)
    expect(listed).toMatchObject({ rotation_due: true, status: "active" })
    // still usable until the owner rotates: the new secret can only be shown to the owner, never pushed anywhere
    expect((await authenticate(key.api_key)).ok).toBe(true)
    const next = await (await call("POST", `/api/keys/${key.id}/rotate`, writer)).json()
    expect(next.rotation_days).toBe(30)
    expect((await events(key.id)).find((e) => e.event === "key.rotated")?.data).toMatchObject({ trigger: "policy", new_key_id: next.id })
    const successor = (await (await call("GET", "/api/v1/keys", reader)).json()).keys.find((k: any) => k.id === next.id)
    expect(successor.rotation_due).toBe(false)
    expect(await gw.query("SELECT action FROM audit_log WHERE target = $1 AND action = 'key.rotation_due'", key.id)).toHaveLength(1)
  })

  it("keeps the audit log append-only", async () => {
    await expect(gw.query("UPDATE audit_log SET actor = 'someone-else'")).rejects.toThrow()
    await expect(gw.query("DELETE FROM audit_log")).rejects.toThrow()
  })
})

describe("axis separation and abilities", () => {
  const routes: Array<[string, string, string, unknown?]> = [
    ["POST", "/api/keys", "ability:keys.write", {}],
    ["GET", "/api/v1/keys", "ability:keys.read"],
    ["PUT", "/api/keys/key_x", "ability:keys.write", {}],
    ["PATCH", "/api/keys/key_x", "ability:keys.write", {}],
    ["POST", "/api/keys/key_x/rotate", "ability:keys.write"],
    ["POST", "/api/keys/key_x/revoke", "ability:keys.write"],
    ["GET", "/api/v1/audit", "ability:admin"]
  ]

  it.each(routes)("%s %s refuses a gateway key with 401 portal_auth_required", async (method, path, _ability, body) => {
    const gatewayKey = (await (await call("POST", "/api/keys", writer, {})).json()).api_key
    for (const bearer of [gatewayKey, undefined]) {
      const res = await call(method, path, bearer, body)
      expect(res.status).toBe(401)
      expect((await res.json()).error.code).toBe("portal_auth_required")
    }
  })

  it.each(routes)("%s %s needs %s (403 insufficient_ability)", async (method, path, ability, body) => {
    const res = await call(method, path, nobody, body)
    expect(res.status).toBe(403)
    const json = await res.json()
    expect(json.error.code).toBe("insufficient_ability")
    expect(json.error.required).toEqual([ability])
  })

  it.each(["/api/v1/chat/completions", "/api/v1/messages", "/api/v1/embeddings"])("POST %s refuses a portal token (401 invalid_key)", async (path) => {
    const res = await call("POST", path, admin, { model: "x", messages: [] })
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe("invalid_key")
  })

  it("a keys.read token may list but not create", async () => {
    expect((await call("GET", "/api/v1/keys", reader)).status).toBe(200)
    expect((await call("POST", "/api/keys", reader, {})).status).toBe(403)
    expect((await call("GET", "/api/v1/audit", writer)).status).toBe(403)
  })
})
