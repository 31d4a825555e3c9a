import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { revokeKey } from "../../../layers/AdminOperations.ts"
import { sha256HexSync } from "../../../layers/crypto/nodeSha256.ts"
import { type GatewayPrincipal, Keys } from "../../../services/Keys.ts"
import { type KeyChanges, KeyManagement } from "../../../services/KeyManagement.ts"
import { keyPrefixOf, newGatewayKey } from "../../../src/keys/format.ts"
import { startTestGateway, startTestGatewayPair, type TestGateway } from "../../support/gateway.ts"
import { fundedKey } from "../../support/tenant.ts"

type Outcome = { readonly principal: GatewayPrincipal } | { readonly error: string }

const authenticate = (gw: TestGateway, apiKey: string): Promise<Outcome> =>
  gw.runtime.runPromise(
    Effect.flatMap(Effect.service(Keys), (keys) => keys.authenticate(apiKey)).pipe(
      Effect.match({ onFailure: (e) => ({ error: e._tag }), onSuccess: (principal) => ({ principal }) })
    )
  )

const permissionsOf = async (gw: TestGateway, apiKey: string) => {
  const outcome = await authenticate(gw, apiKey)
  if (!("principal" in outcome)) throw new Error(`expected an accepted key, got ${outcome.error}`)
  return outcome.principal.permissions
}

const manage = <A>(gw: TestGateway, use: (keys: KeyManagement["Service"]) => Effect.Effect<A, unknown>) =>
  gw.runtime.runPromise(Effect.flatMap(Effect.service(KeyManagement), use))

/** A fresh self-service key, with its id and an actor of its organisation for KeyManagement. */
const newKey = async (gw: TestGateway) => {
  const key = await fundedKey(gw, "0")
  const keyId = (await gw.query<{ id: string }>("SELECT id FROM api_keys WHERE key_prefix = $1", key.keyPrefix))[0].id
  return { ...key, keyId, actor: { id: "test", orgId: key.orgId } }
}

const update = (gw: TestGateway, key: Awaited<ReturnType<typeof newKey>>, changes: KeyChanges) =>
  manage(gw, (keys) => keys.update(key.actor, key.keyId, changes))

/**
 * A change that announces nothing: written with triggers off (session_replication_role = replica, as a replica
 * applying a copy would), so a node that cached the key does not hear it. It is how these tests see that a key is
 * served from memory. The values are generated ids and scope names, safe to inline (DO takes no parameters).
 */
const changeUnannounced = (gw: TestGateway, keyId: string, permissions: ReadonlyArray<string>) =>
  gw.query(`DO $$ BEGIN
    SET LOCAL session_replication_role = replica;
    UPDATE api_keys SET permissions = '${JSON.stringify(permissions)}'::jsonb WHERE id = '${keyId}';
  END $$`)

/** An operator's hand-written SQL: the database itself announces it (migration 0011). */
const changeByHand = (gw: TestGateway, keyId: string, permissions: ReadonlyArray<string>) =>
  gw.query("UPDATE api_keys SET permissions = $1::jsonb WHERE id = $2", JSON.stringify(permissions), keyId)

/** Polls `probe` every 25 ms until it returns true; fails after `ms`. Returns the time it took. */
const within = async (ms: number, probe: () => Promise<boolean>) => {
  const start = Date.now()
  while (!(await probe())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 25))
  }
  return Date.now() - start
}

/**
 * With PostgreSQL the cache is on only while the node's change listener is LISTENing; wait until `count` listeners
 * on this database have run LISTEN (then allow a moment for the fiber to switch the cache on).
 */
const listenersReady = async (gw: TestGateway, count: number) => {
  if (gw.storage.mode.sql !== "postgres") return
  await within(5_000, async () => {
    const rows = await gw.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
         AND application_name = 'privacy-relay-key-cache' AND state = 'idle' AND query LIKE 'LISTEN%'`
    )
    return rows[0].n >= count
  })
  await new Promise((r) => setTimeout(r, 50))
}

const countersign = (gw: TestGateway, apiKey: string) =>
  fetch(`${gw.url}/api/v1/receipts/countersign`, { method: "POST", headers: { authorization: `Bearer ${apiKey}` }, body: "{}" })

describe("authentication cache on one gateway", () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway()
    await listenersReady(gw, 1)
  })
  afterAll(async () => {
    await gw?.close()
  })

  it("a cached key skips the database (an unannounced change is not seen), and a revocation through the service is seen at once", async () => {
    const key = await newKey(gw)
    expect(await permissionsOf(gw, key.apiKey)).toBeNull()
    await changeUnannounced(gw, key.keyId, ["messages"])
    // Served from memory: the database now says ["messages"].
    expect(await permissionsOf(gw, key.apiKey)).toBeNull()
    expect(await permissionsOf(gw, key.apiKey)).toBeNull()

    await manage(gw, (keys) => keys.revoke(key.actor, key.keyId))
    expect(await authenticate(gw, key.apiKey)).toEqual({ error: "KeyRevoked" })
  })

  it("the admin revocation by prefix (CLI and admin API) evicts at once", async () => {
    const key = await newKey(gw)
    expect(await authenticate(gw, key.apiKey)).toHaveProperty("principal")
    await gw.runtime.runPromise(revokeKey({ key_prefix: key.keyPrefix }, "test"))
    expect(await authenticate(gw, key.apiKey)).toEqual({ error: "KeyRevoked" })
  })

  it("a scope or model change through the service is seen at once", async () => {
    const key = await newKey(gw)
    expect(await permissionsOf(gw, key.apiKey)).toBeNull()
    await update(gw, key, { permissions: ["messages"] })
    expect(await permissionsOf(gw, key.apiKey)).toEqual(["messages"])
    await update(gw, key, { models: ["local-chat"] })
    const outcome = await authenticate(gw, key.apiKey)
    expect(outcome).toMatchObject({ principal: { permissions: ["messages"], models: ["local-chat"] } })
  })

  it("rotation refuses the old key at once and the new key works at once", async () => {
    const key = await newKey(gw)
    expect(await authenticate(gw, key.apiKey)).toHaveProperty("principal")
    const minted = await manage(gw, (keys) => keys.rotate(key.actor, key.keyId))
    expect(await authenticate(gw, key.apiKey)).toEqual({ error: "KeyRevoked" })
    expect(await authenticate(gw, minted.apiKey)).toMatchObject({ principal: { keyId: minted.record.id } })
  })

  it("a key revoked by hand in SQL is refused within moments: the database announces the change", async () => {
    const key = await newKey(gw)
    expect(await authenticate(gw, key.apiKey)).toHaveProperty("principal")
    await gw.query("UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = $1", key.keyId)
    const ms = await within(2_000, async () => JSON.stringify(await authenticate(gw, key.apiKey)) === JSON.stringify({ error: "KeyRevoked" }))
    expect(ms).toBeLessThan(2_000)
    // Revoking it again through the service is a no-op that still answers the revoked key.
    await manage(gw, (keys) => keys.revoke(key.actor, key.keyId))
    expect(await authenticate(gw, key.apiKey)).toEqual({ error: "KeyRevoked" })
  })

  it("a scope change by hand in SQL is seen within moments; using a key announces nothing", async () => {
    const key = await newKey(gw)
    expect(await permissionsOf(gw, key.apiKey)).toBeNull()
    await changeByHand(gw, key.keyId, ["messages"])
    await within(2_000, async () => JSON.stringify(await permissionsOf(gw, key.apiKey)) === JSON.stringify(["messages"]))
    // last_used_at is bookkeeping: writing it does not evict the key (an unannounced change stays unseen after it).
    await changeUnannounced(gw, key.keyId, ["completions"])
    await gw.query("UPDATE api_keys SET last_used_at = now() - interval '1 hour' WHERE id = $1", key.keyId)
    await new Promise((r) => setTimeout(r, 100))
    expect(await permissionsOf(gw, key.apiKey)).toEqual(["messages"])
  })

  it("re-parenting an organisation by hand announces its keys", async () => {
    const key = await newKey(gw)
    const parent = await newKey(gw)
    expect(await authenticate(gw, key.apiKey)).toMatchObject({ principal: { parentOrgId: null } })
    await gw.query("UPDATE organisations SET parent_id = $1 WHERE id = $2", parent.orgId, key.orgId)
    await within(2_000, async () => {
      const outcome = await authenticate(gw, key.apiKey)
      return "principal" in outcome && outcome.principal.parentOrgId === parent.orgId
    })
  })

  it("an unknown key is not remembered: inserted a moment later, it works at once", async () => {
    const { orgId } = await newKey(gw)
    const apiKey = newGatewayKey()
    expect(await authenticate(gw, apiKey)).toEqual({ error: "InvalidKey" })
    await gw.query(
      "INSERT INTO api_keys (id, org_id, account_id, key_hash, key_prefix, tier) VALUES ($1, $2, (SELECT id FROM accounts WHERE org_id = $2 LIMIT 1), $3, $4, 'free')",
      `key_${crypto.randomUUID().replaceAll("-", "")}`,
      orgId,
      sha256HexSync(apiKey),
      keyPrefixOf(apiKey)
    )
    expect(await authenticate(gw, apiKey)).toHaveProperty("principal")
  })

  it("still records last_used_at when a key is used", async () => {
    const key = await newKey(gw)
    expect(await authenticate(gw, key.apiKey)).toHaveProperty("principal")
    await within(2_000, async () =>
      (await gw.query<{ t: unknown }>("SELECT last_used_at AS t FROM api_keys WHERE id = $1", key.keyId))[0].t !== null)
  })

  it.skipIf(process.env.DATABASE_URL === undefined)(
    "PostgreSQL: when the change listener's connection dies the cache is emptied and off, and it comes back",
    async () => {
      const key = await newKey(gw)
      expect(await permissionsOf(gw, key.apiKey)).toBeNull()
      await changeUnannounced(gw, key.keyId, ["messages"])
      expect(await permissionsOf(gw, key.apiKey)).toBeNull()

      const killed = await gw.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'privacy-relay-key-cache'`
      )
      expect(killed.map((r) => r.ok)).toEqual([true])
      // Changes may have been missed while nobody listened: the next lookup asks the database.
      await within(2_000, async () => JSON.stringify(await permissionsOf(gw, key.apiKey)) === JSON.stringify(["messages"]))

      // The listener reconnects (LISTEN_RETRY) and caching resumes.
      await listenersReady(gw, 1)
      const again = await newKey(gw)
      expect(await permissionsOf(gw, again.apiKey)).toBeNull()
      await changeUnannounced(gw, again.keyId, ["messages"])
      expect(await permissionsOf(gw, again.apiKey)).toBeNull()
    }
  )
})

describe("authentication cache across two gateway nodes", () => {
  let a: TestGateway
  let b: TestGateway
  beforeAll(async () => {
    ;[a, b] = await startTestGatewayPair()
    await listenersReady(a, 2)
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
  })

  /** A key that node b has cached (shown by an unannounced change that b does not see), ready to be changed on node a. */
  const cachedOnB = async () => {
    const key = await newKey(a)
    expect((await countersign(b, key.apiKey)).status).toBe(400) // accepted; the empty body is what is refused
    await changeUnannounced(a, key.keyId, ["completions"])
    expect(await permissionsOf(b, key.apiKey)).toBeNull()
    return key
  }

  it("a key revoked on one node is refused by the other with 401 key_revoked within moments", async () => {
    const key = await cachedOnB()
    await manage(a, (keys) => keys.revoke(key.actor, key.keyId))
    const ms = await within(2_000, async () => {
      const res = await countersign(b, key.apiKey)
      return res.status === 401 && (await res.json()).error.code === "key_revoked"
    })
    expect(ms).toBeLessThan(2_000)
  })

  it("a key rotated on one node is refused by the other; its successor works there at once", async () => {
    const key = await cachedOnB()
    const minted = await manage(a, (keys) => keys.rotate(key.actor, key.keyId))
    expect((await countersign(b, minted.apiKey)).status).toBe(400)
    await within(2_000, async () => (await countersign(b, key.apiKey)).status === 401)
  })

  it("a scope change on one node reaches the other: 403 insufficient_scope there", async () => {
    const key = await cachedOnB()
    await update(a, key, { permissions: ["messages"] })
    await within(2_000, async () => {
      const res = await fetch(`${b.url}/api/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key.apiKey}` }, body: "{}" })
      return res.status === 403 && (await res.json()).error.code === "insufficient_scope"
    })
  })
})
