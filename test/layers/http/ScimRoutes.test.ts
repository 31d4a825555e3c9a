import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ScimTokens } from "../../../services/ScimTokens.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

/**
 * SCIM 2.0 at /scim/v2 against a real in-process gateway: discovery, Users and Groups CRUD, filters and pages, the
 * side effects of deactivating and deleting a person (sessions ended, `user.deleted`), groups mapped to roles, and
 * every refused request answering SCIM's error schema while changing nothing.
 */
let gw: TestGateway
let orgId: string
let ownerId: string
let token: string
const OWNER = { email: "scim-owner@example.org", password: "owner password 1" }
const PERSON = { email: "scim-person@example.org", password: "person password 1" }

const issueToken = (org: string) =>
  gw.runtime.runPromise(Effect.flatMap(Effect.service(ScimTokens), (t) => t.issue({ orgId: org, actor: "test" })))

/** `bearer` null sends no Authorization header. */
const scim = async (method: string, path: string, body?: unknown, bearer: string | null = token) => {
  const res = await fetch(`${gw.url}/scim/v2${path}`, {
    method,
    headers: { ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }), "content-type": "application/scim+json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, type: res.headers.get("content-type"), location: res.headers.get("location"), json: text === "" ? undefined : JSON.parse(text) }
}

const login = async (who: { email: string; password: string }, org?: string) => {
  const res = await fetch(`${gw.url}/api/v1/portal/login`, { method: "POST", body: JSON.stringify({ ...who, ...(org ? { org_id: org } : {}) }) })
  return { status: res.status, cookie: res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), json: await res.json() }
}
const sessionWorks = async (cookie: string) => (await fetch(`${gw.url}/api/v1/account`, { headers: { cookie } })).status

const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"

const newUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA],
  userName,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ value: userName, type: "work", primary: true }],
  active: true,
  ...extra
})

/** What a refused request must leave untouched. */
const snapshot = async () => ({
  users: await gw.query("SELECT * FROM scim_users ORDER BY account_id"),
  groups: await gw.query("SELECT * FROM scim_groups ORDER BY id"),
  members: await gw.query("SELECT * FROM scim_group_members ORDER BY group_id, account_id"),
  memberships: await gw.query("SELECT account_id, org_id, role, suspended_at FROM memberships ORDER BY account_id, org_id"),
  sessions: await gw.query("SELECT id FROM portal_sessions ORDER BY id"),
  events: await gw.query("SELECT id FROM outbox_events ORDER BY id")
})

beforeAll(async () => {
  gw = await startTestGateway()
  const owner = await (await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify(OWNER) })).json()
  orgId = owner.org_id
  ownerId = owner.account_id
  await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", body: JSON.stringify(PERSON) })
  token = (await issueToken(orgId)).token
})
afterAll(() => gw.close())

describe("SCIM tokens", () => {
  it("are shown once and stored only as their SHA-256", async () => {
    expect(token).toMatch(/^scim_[A-Za-z0-9_-]{43}$/)
    const dump = JSON.stringify(await gw.query("SELECT * FROM scim_tokens"))
    expect(dump).not.toContain(token)
    expect(dump).toContain(token.slice(0, 12))
  })

  it("refuse a missing, malformed, unknown or revoked token with 401 in SCIM's error schema, creating nothing", async () => {
    const revoked = await issueToken(orgId)
    await gw.runtime.runPromise(Effect.flatMap(Effect.service(ScimTokens), (t) => t.revoke({ orgId, tokenId: revoked.id, actor: "test" })))
    const before = await snapshot()
    for (const bearer of [null, "nonsense", `scim_${"A".repeat(43)}`, revoked.token]) {
      const res = await scim("POST", "/Users", newUser("intruder@example.org"), bearer)
      expect(res.status).toBe(401)
      expect(res.type).toContain("application/scim+json")
      expect(res.json).toMatchObject({ schemas: [ERROR], status: "401" })
      expect((await scim("GET", "/Users", undefined, bearer)).status).toBe(401)
    }
    expect(await snapshot()).toEqual(before)
  })
})

describe("discovery", () => {
  it("serves ServiceProviderConfig, ResourceTypes and Schemas", async () => {
    const config = await scim("GET", "/ServiceProviderConfig")
    expect(config.status).toBe(200)
    expect(config.type).toContain("application/scim+json")
    expect(config.json).toMatchObject({ patch: { supported: true }, filter: { supported: true }, bulk: { supported: false } })
    const types = await scim("GET", "/ResourceTypes")
    expect(types.json.Resources.map((r: { id: string }) => r.id)).toEqual(["User", "Group"])
    const schemas = await scim("GET", "/Schemas")
    expect(schemas.json.Resources.map((r: { id: string }) => r.id)).toEqual([USER_SCHEMA, GROUP_SCHEMA])
    expect((await scim("GET", `/Schemas/${USER_SCHEMA}`)).json.attributes.map((a: { name: string }) => a.name)).toContain("userName")
    expect((await scim("GET", "/Schemas/urn:nope")).status).toBe(404)
  })

  it("answers 405 to writes on discovery documents and 404 in SCIM's schema elsewhere under /scim/v2", async () => {
    const write = await scim("POST", "/ServiceProviderConfig", {})
    expect(write.status).toBe(405)
    expect(write.json).toMatchObject({ schemas: [ERROR], status: "405" })
    const nowhere = await scim("GET", "/Nowhere")
    expect(nowhere.status).toBe(404)
    expect(nowhere.json).toMatchObject({ schemas: [ERROR], status: "404" })
    expect((await scim("GET", "/Nowhere", undefined, null)).status).toBe(401)
  })
})

describe("Users", () => {
  let userId: string

  it("creates a person: an account with a membership, user.created fired, 201 with Location", async () => {
    const res = await scim("POST", "/Users", newUser("grace@example.org", { externalId: "okta-1", displayName: "Grace" }))
    expect(res.status).toBe(201)
    userId = res.json.id
    expect(res.location).toBe(`${gw.url}/scim/v2/Users/${userId}`)
    expect(res.json).toMatchObject({ userName: "grace@example.org", externalId: "okta-1", active: true, emails: [{ value: "grace@example.org", primary: true }], meta: { resourceType: "User" } })
    expect(await gw.query("SELECT role FROM memberships WHERE account_id = $1 AND org_id = $2", userId, orgId)).toEqual([{ role: "member" }])
    const events = await gw.query<{ event: string; data: unknown }>("SELECT event, data FROM outbox_events WHERE org_id = $1 AND data->>'account_id' = $2", orgId, userId)
    expect(events).toEqual([{ event: "user.created", data: { account_id: userId, org_id: orgId, role: "member" } }])
    expect((await scim("GET", `/Users/${userId}`)).json.id).toBe(userId)
  })

  it("refuses a second User with the same userName (409 uniqueness)", async () => {
    const res = await scim("POST", "/Users", newUser("GRACE@example.org"))
    expect(res.status).toBe(409)
    expect(res.json).toMatchObject({ schemas: [ERROR], status: "409", scimType: "uniqueness" })
  })

  it("lists with filter userName eq (case-insensitive), and pages with startIndex and count", async () => {
    for (const n of [1, 2, 3]) expect((await scim("POST", "/Users", newUser(`page${n}@example.org`))).status).toBe(201)
    const found = await scim("GET", `/Users?filter=${encodeURIComponent('userName eq "Grace@Example.org"')}`)
    expect(found.json).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: 1, startIndex: 1, itemsPerPage: 1 })
    expect(found.json.Resources[0].id).toBe(userId)
    const none = await scim("GET", `/Users?filter=${encodeURIComponent('userName eq "nobody@example.org"')}`)
    expect(none.json).toMatchObject({ totalResults: 0, Resources: [] })
    const sw = await scim("GET", `/Users?filter=${encodeURIComponent('userName sw "page" and active eq true')}&startIndex=2&count=1`)
    expect(sw.json).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 })
    expect(sw.json.Resources[0].userName).toBe("page2@example.org")
    const searched = await scim("POST", "/Users/.search", {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
      filter: 'userName sw "page"',
      startIndex: 3,
      count: 5,
      attributes: ["userName"]
    })
    expect(searched.json).toMatchObject({ totalResults: 3, startIndex: 3, itemsPerPage: 1 })
    expect(Object.keys(searched.json.Resources[0]).sort()).toEqual(["id", "meta", "schemas", "userName"])
    const countOnly = await scim("GET", "/Users?count=0")
    expect(countOnly.json).toMatchObject({ totalResults: 4, itemsPerPage: 0, Resources: [] })
  })

  it("refuses a bad filter and a filter on an unknown attribute (400 invalidFilter)", async () => {
    for (const filter of ['userName eq', 'userName eq "a" and (', 'shoeSize eq "42"', 'emails[colour eq "red"]']) {
      const res = await scim("GET", `/Users?filter=${encodeURIComponent(filter)}`)
      expect(res.status, filter).toBe(400)
      expect(res.json).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidFilter" })
    }
  })

  it("refuses a body with an unknown attribute (400 invalidSyntax) and a PATCH to an unknown path (400 invalidPath), changing nothing", async () => {
    const before = await snapshot()
    const post = await scim("POST", "/Users", newUser("shoes@example.org", { shoeSize: 42 }))
    expect(post.status).toBe(400)
    expect(post.json).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidSyntax" })
    expect(post.json.detail).toContain("shoeSize")
    const put = await scim("PUT", `/Users/${userId}`, newUser("grace@example.org", { favouriteColour: "red" }))
    expect(put.json).toMatchObject({ status: "400", scimType: "invalidSyntax" })
    const patch = await scim("PATCH", `/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: "add", path: "shoeSize", value: 42 }] })
    expect(patch.status).toBe(400)
    expect(patch.json).toMatchObject({ schemas: [ERROR], scimType: "invalidPath" })
    expect((await scim("POST", "/Users", "{not json")).json).toMatchObject({ status: "400", scimType: "invalidSyntax" })
    expect(await snapshot()).toEqual(before)
  })

  it("accepts and drops RFC 7643 attributes it does not keep (an IdP's default mapping works)", async () => {
    const res = await scim("POST", "/Users", newUser("dropped@example.org", {
      title: "Engineer",
      phoneNumbers: [{ value: "+44 20 7946 0000", type: "work" }],
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "R&D" },
      schemas: [USER_SCHEMA, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]
    }))
    expect(res.status).toBe(201)
    expect(JSON.stringify(res.json)).not.toContain("7946")
    expect(JSON.stringify(await gw.query("SELECT * FROM scim_users"))).not.toContain("Engineer")
  })

  it("replaces with PUT and patches with PATCH", async () => {
    const put = await scim("PUT", `/Users/${userId}`, newUser("grace@example.org", { displayName: "Grace H.", externalId: "okta-1" }))
    expect(put.status).toBe(200)
    expect(put.json).toMatchObject({ displayName: "Grace H.", name: { givenName: "Ada" } })
    const patch = await scim("PATCH", `/Users/${userId}`, {
      schemas: [PATCH],
      Operations: [{ op: "Replace", path: "name.givenName", value: "Grace" }, { op: "replace", value: { displayName: "Grace Hopper" } }]
    })
    expect(patch.status).toBe(200)
    expect(patch.json).toMatchObject({ displayName: "Grace Hopper", name: { givenName: "Grace", familyName: "Lovelace" } })
  })

  it("deactivating a person (Entra's PATCH active \"False\") ends their portal session at once, refuses their sign-in and fires user.deleted", async () => {
    const linked = await scim("POST", "/Users", newUser(PERSON.email))
    expect(linked.status).toBe(201)
    const personId = linked.json.id
    const session = await login(PERSON, orgId)
    expect(session.status).toBe(200)
    expect(await sessionWorks(session.cookie)).toBe(200)
    const res = await scim("PATCH", `/Users/${personId}`, { schemas: [PATCH], Operations: [{ op: "Replace", path: "active", value: "False" }] })
    expect(res.status).toBe(200)
    expect(res.json.active).toBe(false)
    expect(await sessionWorks(session.cookie)).toBe(401)
    expect(await gw.query("SELECT id FROM portal_sessions WHERE account_id = $1", personId)).toEqual([])
    expect((await login(PERSON, orgId)).status).toBe(403)
    const events = await gw.query<{ event: string; data: unknown }>("SELECT event, data FROM outbox_events WHERE org_id = $1 AND data->>'account_id' = $2 ORDER BY created_at", orgId, personId)
    expect(events.map((e) => e.event)).toEqual(["org.member_added", "user.deleted"])
    expect(events[1].data).toEqual({ account_id: personId, org_id: orgId, reason: "deactivated" })
    // Their own organisation is theirs still.
    expect((await login(PERSON)).status).toBe(200)
    const audit = await gw.query<{ action: string }>("SELECT action FROM audit_log WHERE target = $1 AND org_id = $2 ORDER BY id", personId, orgId)
    expect(audit.map((a) => a.action)).toContain("scim.user_deactivated")
    // Reactivated: they may sign in to the organisation again.
    expect((await scim("PATCH", `/Users/${personId}`, { schemas: [PATCH], Operations: [{ op: "replace", path: "active", value: true }] })).json.active).toBe(true)
    expect((await login(PERSON, orgId)).status).toBe(200)
  })

  it("deleting a person ends their sessions, fires user.deleted and erases an account no other organisation knows", async () => {
    const personId = (await scim("GET", `/Users?filter=${encodeURIComponent(`userName eq "${PERSON.email}"`)}`)).json.Resources[0].id
    const session = await login(PERSON, orgId)
    expect(await sessionWorks(session.cookie)).toBe(200)
    const res = await scim("DELETE", `/Users/${personId}`)
    expect(res.status).toBe(204)
    expect(await sessionWorks(session.cookie)).toBe(401)
    expect((await scim("GET", `/Users/${personId}`)).status).toBe(404)
    expect(await gw.query("SELECT 1 FROM memberships WHERE account_id = $1 AND org_id = $2", personId, orgId)).toEqual([])
    // The person signed up with an organisation of their own: the account stays theirs.
    expect(await gw.query("SELECT deleted_at FROM accounts WHERE id = $1", personId)).toEqual([{ deleted_at: null }])
    const last = await gw.query<{ event: string; data: unknown }>("SELECT event, data FROM outbox_events WHERE org_id = $1 ORDER BY created_at DESC LIMIT 1", orgId)
    expect(last).toEqual([{ event: "user.deleted", data: { account_id: personId, org_id: orgId } }])

    // A person the IdP created and only this organisation knows is erased.
    const grace = (await scim("GET", `/Users?filter=${encodeURIComponent('userName eq "grace@example.org"')}`)).json.Resources[0].id
    expect((await scim("DELETE", `/Users/${grace}`)).status).toBe(204)
    const [row] = await gw.query<{ email: string | null; deleted: boolean }>("SELECT email, deleted_at IS NOT NULL AS deleted FROM accounts WHERE id = $1", grace)
    expect(row).toEqual({ email: null, deleted: true })
    expect((await scim("DELETE", `/Users/${grace}`)).status).toBe(404)
  })
})

describe("Groups and roles", () => {
  let memberId: string
  let ownerScimId: string
  let adminsId: string
  let ownersId: string

  it("a group's name gives its members a role: Relay Admins -> admin, removed -> member", async () => {
    memberId = (await scim("POST", "/Users", newUser("lin@example.org"))).json.id
    const created = await scim("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "Relay Admins", members: [{ value: memberId }] })
    expect(created.status).toBe(201)
    adminsId = created.json.id
    expect(created.json).toMatchObject({ displayName: "Relay Admins", members: [{ value: memberId, $ref: `${gw.url}/scim/v2/Users/${memberId}` }] })
    expect(await gw.query("SELECT role FROM memberships WHERE account_id = $1 AND org_id = $2", memberId, orgId)).toEqual([{ role: "admin" }])
    const found = await scim("GET", `/Groups?filter=${encodeURIComponent('displayName eq "relay admins"')}&excludedAttributes=members`)
    expect(found.json.totalResults).toBe(1)
    expect(found.json.Resources[0].members).toBeUndefined()
    // Okta's way of removing a member.
    const removed = await scim("PATCH", `/Groups/${adminsId}`, { schemas: [PATCH], Operations: [{ op: "remove", path: `members[value eq "${memberId}"]` }] })
    expect(removed.status).toBe(200)
    expect(removed.json.members).toEqual([])
    expect(await gw.query("SELECT role FROM memberships WHERE account_id = $1 AND org_id = $2", memberId, orgId)).toEqual([{ role: "member" }])
    // Entra's way of adding one.
    const added = await scim("PATCH", `/Groups/${adminsId}`, { schemas: [PATCH], Operations: [{ op: "Add", path: "members", value: [{ value: memberId }] }] })
    expect(added.json.members.map((m: { value: string }) => m.value)).toEqual([memberId])
    expect(await gw.query("SELECT role FROM memberships WHERE account_id = $1 AND org_id = $2", memberId, orgId)).toEqual([{ role: "admin" }])
  })

  it("refuses a member that is not a User of the organisation (400 invalidValue), changing nothing", async () => {
    const before = await snapshot()
    const res = await scim("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "Strangers", members: [{ value: ownerId }] })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ scimType: "invalidValue" })
    expect(await snapshot()).toEqual(before)
  })

  it("refuses a PATCH that would remove the last owner, and a deactivation of the last owner, changing nothing", async () => {
    ownerScimId = (await scim("POST", "/Users", newUser(OWNER.email))).json.id
    expect(ownerScimId).toBe(ownerId)
    ownersId = (await scim("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: "Owners", members: [{ value: ownerId }] })).json.id
    const session = await login(OWNER)
    const before = await snapshot()
    const removeOwner = await scim("PATCH", `/Groups/${ownersId}`, { schemas: [PATCH], Operations: [{ op: "remove", path: `members[value eq "${ownerId}"]` }] })
    expect(removeOwner.status).toBe(400)
    expect(removeOwner.json).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" })
    expect(removeOwner.json.detail).toContain("owner")
    const deactivate = await scim("PATCH", `/Users/${ownerId}`, { schemas: [PATCH], Operations: [{ op: "replace", path: "active", value: false }] })
    expect(deactivate.json).toMatchObject({ status: "400", scimType: "invalidValue" })
    expect((await scim("DELETE", `/Groups/${ownersId}`)).status).toBe(400)
    expect((await scim("DELETE", `/Users/${ownerId}`)).status).toBe(400)
    expect(await snapshot()).toEqual(before)
    expect(await sessionWorks(session.cookie)).toBe(200)
  })

  it("lets the owner go once another person owns the organisation", async () => {
    expect((await scim("PATCH", `/Groups/${ownersId}`, { schemas: [PATCH], Operations: [{ op: "add", path: "members", value: [{ value: memberId }] }] })).status).toBe(200)
    const res = await scim("PATCH", `/Groups/${ownersId}`, { schemas: [PATCH], Operations: [{ op: "remove", path: `members[value eq "${ownerId}"]` }] })
    expect(res.status).toBe(200)
    expect(await gw.query("SELECT account_id, role FROM memberships WHERE org_id = $1 AND role = 'owner'", orgId)).toEqual([{ account_id: memberId, role: "owner" }])
    expect((await scim("DELETE", `/Groups/${adminsId}`)).status).toBe(204)
    expect((await scim("GET", `/Groups/${adminsId}`)).status).toBe(404)
  })
})
