import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg, createPortalToken } from "../../../layers/AdminOperations.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
})
afterAll(async () => {
  await gw.close()
})

const token = async (orgId: string, abilities: string) => (await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities }))).token as string
const call = (method: string, path: string, bearer: string, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
const addUsage = (orgId: string, id: string) =>
  gw.query(`INSERT INTO usage_records (id, request_id, gateway_request_id, org_id, key_id, provider, model, capability, key_mode,
    input_tokens, output_tokens, upstream_cost_micros, billed_micros, markup_micros, trace_id, started_at)
    VALUES ($1, $1, $1, $2, 'key_x', 'local', 'local-chat', 'chat.completions', 'pooled', 3, 4, 1, 7, 0, 't', now())`, id, orgId)

describe("partner mode: sub-organisations", () => {
  it("a parent creates sub-organisations with their own empty wallets and lists them", async () => {
    const { org_id: parent } = await gw.runtime.runPromise(createOrg({ name: "partner" }))
    const writer = await token(parent, "abilities:write,ability:billing.read")
    const res = await call("POST", "/api/v1/orgs/sub", writer, { name: "customer one" })
    expect(res.status).toBe(201)
    const created = await res.json()
    expect(created).toMatchObject({ parent_id: parent, name: "customer one", balance_micros: 0 })
    expect(await gw.query("SELECT parent_id FROM organisations WHERE id = $1", created.org_id)).toEqual([{ parent_id: parent }])
    const list = await (await call("GET", "/api/v1/orgs/sub", writer)).json()
    expect(list.organisations.map((o: any) => o.org_id)).toEqual([created.org_id])
  })

  it("needs abilities:write to create one", async () => {
    const { org_id: parent } = await gw.runtime.runPromise(createOrg({ name: "partner" }))
    const reader = await token(parent, "ability:billing.read")
    const res = await call("POST", "/api/v1/orgs/sub", reader, { name: "x" })
    expect(res.status).toBe(403)
    expect((await res.json()).error.code).toBe("insufficient_ability")
  })

  it("the parent sees a sub-organisation's usage; the sub sees neither its parent nor its siblings", async () => {
    const { org_id: parent } = await gw.runtime.runPromise(createOrg({ name: "partner" }))
    const parentToken = await token(parent, "abilities:write,ability:billing.read")
    const a = (await (await call("POST", "/api/v1/orgs/sub", parentToken, { name: "a" })).json()).org_id
    const b = (await (await call("POST", "/api/v1/orgs/sub", parentToken, { name: "b" })).json()).org_id
    await addUsage(a, "use_sub_a")
    await addUsage(parent, "use_parent")
    const usage = await call("GET", `/api/v1/orgs/sub/${a}/usage`, parentToken)
    expect(usage.status).toBe(200)
    const json = await usage.json()
    expect(json.org_id).toBe(a)
    expect(json.records.map((r: any) => r.id)).toEqual(["use_sub_a"])
    expect(json.summary[0]).toMatchObject({ calls: 1, input_tokens: 3, output_tokens: 4, billed_micros: 7 })

    const subToken = await token(a, "abilities:write,ability:billing.read")
    for (const path of [`/api/v1/orgs/sub/${parent}/usage`, `/api/v1/orgs/sub/${b}/usage`]) {
      const res = await call("GET", path, subToken)
      expect(res.status).toBe(404)
    }
    expect((await (await call("GET", "/api/v1/orgs/sub", subToken)).json()).organisations).toEqual([])
    // the sub's own usage read shows only its own records
    expect((await (await call("GET", "/api/v1/billing/usage", subToken)).json()).records.map((r: any) => r.id)).toEqual(["use_sub_a"])
  })
})
