// layers/pg/ScimTokens.ts: the bookkeeping behind the operator's list (`last_used_at`, refreshed at most once a
// minute when the IdP authenticates) and the list's refusal of an unknown organisation.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createOrg } from "../../../layers/AdminOperations.ts"
import { ScimTokens } from "../../../services/ScimTokens.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
let orgId: string

const tokens = <A, E>(f: (t: ScimTokens["Service"]) => Effect.Effect<A, E>) =>
  gw.runtime.runPromise(Effect.flatMap(Effect.service(ScimTokens), f) as Effect.Effect<A, E, never>)
const lastUsed = async (id: string) =>
  (await gw.query<{ last_used_at: unknown }>("SELECT last_used_at FROM scim_tokens WHERE id = $1", id))[0].last_used_at
const instant = (v: unknown) => (v === null ? null : new Date(v as string | Date).toISOString())

beforeAll(async () => {
  gw = await startTestGateway()
  orgId = (await gw.runtime.runPromise(createOrg({ name: "Bookkeeping Ltd" }))).org_id
})
afterAll(() => gw.close())

describe("ScimTokensPg", () => {
  it("records the first use; within a minute further uses write nothing; after a minute the next use refreshes it", async () => {
    const { id, token } = await tokens((t) => t.issue({ orgId, actor: "test" }))
    expect(await lastUsed(id)).toBeNull()
    expect((await tokens((t) => t.list(orgId))).find((t) => t.id === id)?.lastUsedAt).toBeNull()

    expect(await tokens((t) => t.authenticate(token))).toEqual({ orgId, tokenId: id })
    const first = instant(await lastUsed(id))
    expect(first).not.toBeNull()
    expect((await tokens((t) => t.list(orgId))).find((t) => t.id === id)?.lastUsedAt).toBe(first)

    // The last use moved 30 s back by SQL (not by waiting): still within the minute, so this use writes nothing.
    await gw.query("UPDATE scim_tokens SET last_used_at = now() - interval '30 seconds' WHERE id = $1", id)
    const recent = instant(await lastUsed(id))
    await tokens((t) => t.authenticate(token))
    expect(instant(await lastUsed(id))).toBe(recent)

    await gw.query("UPDATE scim_tokens SET last_used_at = now() - interval '90 seconds' WHERE id = $1", id)
    const stale = instant(await lastUsed(id))
    await tokens((t) => t.authenticate(token))
    const refreshed = instant(await lastUsed(id))
    expect(Date.parse(refreshed!)).toBeGreaterThan(Date.parse(stale!) + 60_000)
  })

  it("a revoked or unknown token is refused and records nothing", async () => {
    const { id, token } = await tokens((t) => t.issue({ orgId, actor: "test" }))
    await tokens((t) => t.revoke({ orgId, tokenId: id, actor: "test" }))
    const refused = await gw.runtime.runPromise(Effect.flip(Effect.flatMap(Effect.service(ScimTokens), (t) => t.authenticate(token))))
    expect(refused._tag).toBe("ScimUnauthorized")
    expect(await lastUsed(id)).toBeNull()
  })

  it("listing an organisation that does not exist fails ScimOrganisationNotFound (404 not_found at the edge)", async () => {
    const failure = await gw.runtime.runPromise(Effect.flip(Effect.flatMap(Effect.service(ScimTokens), (t) => t.list("org_absent"))))
    expect(failure).toMatchObject({ _tag: "ScimOrganisationNotFound", orgId: "org_absent" })
  })
})
