// Every completed relay call is sealed, whatever made its key (issue: receipts were missing for portal-created and
// rotated keys, whose rows had no account). One table of key origins; for each, a non-streamed and a streamed call and
// a failed call, asserting what the customer gets (headers, trailer) and what storage holds (stored v1 by jti, chain
// continuity, usage, debit, receipt.signed events). Runs on PostgreSQL+Redis and on embedded PGlite.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { checkLedger, createOrg, createPortalToken, creditWallet } from "../../../layers/AdminOperations.ts"
import { Accounts } from "../../../services/Accounts.ts"
import { attestedHeaders } from "../../support/engine.ts"
import { fetchJwks, independentHash, independentlyVerify } from "../../support/receipts.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { balanceMicros, fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

let network = 0
/** Each self-service issuance from its own pretend network, so issuance limits never interfere. */
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${fx.gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": `198.19.${Math.floor(++network / 250)}.${network % 250}`, ...headers },
    body: JSON.stringify(body)
  })

const run = <A>(effect: Effect.Effect<A, unknown, any>) => fx.gw.runtime.runPromise(effect as Effect.Effect<A>)
const credit = (orgId: string) => run(creditWallet({ org_id: orgId, usd: "10" }))
const portalToken = async (orgId: string) =>
  (await run(createPortalToken({ org_id: orgId, abilities: "ability:keys.read,ability:keys.write,abilities:write" }))).token as string

/** Rotates a key through the portal route; returns the successor's plain key. */
const rotate = async (token: string, keyId: string) => {
  const res = await post(`/api/keys/${keyId}/rotate`, {}, { authorization: `Bearer ${token}` })
  expect(res.status).toBe(201)
  const minted = await res.json()
  expect(minted.permissions).toEqual([])
  return minted as { id: string; api_key: string }
}

const keyIdOf = async (apiKey: string) =>
  (await fx.gw.query<{ id: string }>("SELECT id FROM api_keys WHERE key_prefix = $1", apiKey.slice(0, 10)))[0].id

const selfServiceWithEmail = async (email: string) => {
  const res = await post("/api/v1/self-service/key", { email })
  expect(res.status).toBe(201)
  const { api_key } = await res.json()
  const orgId = (await fx.gw.query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", api_key.slice(0, 10)))[0].org_id
  return { apiKey: api_key as string, orgId }
}

const verifyEmail = async (email: string) => {
  expect((await post("/api/v1/account/verification", { email })).status).toBe(202)
  const mails = await fx.gw.query<{ body_text: string }>("SELECT body_text FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id DESC", email)
  const token = new URL(/(http\S+\/api\/v1\/account\/verify\?token=[A-Za-z0-9_-]+)/.exec(mails[0].body_text)![1]).searchParams.get("token")
  expect((await post("/api/v1/account/verify", { token, password: "a fine passphrase" })).status).toBe(200)
}

interface Origin {
  readonly apiKey: string
  readonly orgId: string
  /** Keys whose calls share this key's v1 chain and were used before it (a rotated key's predecessors). */
  readonly predecessors?: ReadonlyArray<string>
}

let mail = 0
const origins: ReadonlyArray<readonly [string, () => Promise<Origin>]> = [
  ["self-service, anonymous", () => fundedKey(fx.gw)],
  ["self-service with e-mail, before verification", async () => {
    const k = await selfServiceWithEmail(`before-${++mail}@example.org`)
    await credit(k.orgId)
    return k
  }],
  ["self-service with e-mail, after verification", async () => {
    const email = `after-${++mail}@example.org`
    const k = await selfServiceWithEmail(email)
    await verifyEmail(email)
    await credit(k.orgId)
    return k
  }],
  ["portal-created (POST /api/keys with a portal token)", async () => {
    const { org_id: orgId } = await run(createOrg({ name: "portal keys" }))
    await credit(orgId)
    const res = await post("/api/keys", { name: "backend" }, { authorization: `Bearer ${await portalToken(orgId)}` })
    expect(res.status).toBe(201)
    const minted = await res.json()
    expect(minted.permissions).toEqual([])
    return { apiKey: minted.api_key, orgId }
  }],
  ["portal-created, rotated twice (third generation)", async () => {
    const { org_id: orgId } = await run(createOrg({ name: "rotating keys" }))
    await credit(orgId)
    const token = await portalToken(orgId)
    const first = await (await post("/api/keys", {}, { authorization: `Bearer ${token}` })).json()
    await relayOk(first.api_key)
    const second = await rotate(token, first.id)
    await relayOk(second.api_key)
    const third = await rotate(token, second.id)
    return { apiKey: third.api_key, orgId, predecessors: [first.api_key, second.api_key] }
  }],
  ["self-service key, rotated", async () => {
    const k = await fundedKey(fx.gw)
    await relayOk(k.apiKey)
    const next = await rotate(await portalToken(k.orgId), await keyIdOf(k.apiKey))
    return { apiKey: next.api_key, orgId: k.orgId, predecessors: [k.apiKey] }
  }],
  ["partner sub-organisation key", async () => {
    const { org_id: parent } = await run(createOrg({ name: "partner" }))
    const token = await portalToken(parent)
    const sub = await (await post("/api/v1/orgs/sub", { name: "customer" }, { authorization: `Bearer ${token}` })).json()
    await credit(sub.org_id)
    const res = await post("/api/keys", { org_id: sub.org_id }, { authorization: `Bearer ${token}` })
    expect(res.status).toBe(201)
    return { apiKey: (await res.json()).api_key, orgId: sub.org_id }
  }],
  ["key of an erased account", async () => {
    const email = `erased-${++mail}@example.org`
    const k = await selfServiceWithEmail(email)
    await credit(k.orgId)
    const [{ account_id }] = await fx.gw.query<{ account_id: string }>("SELECT account_id FROM api_keys WHERE org_id = $1", k.orgId)
    await run(Effect.flatMap(Effect.service(Accounts), (a) => a.erase({ actor: "test", accountId: account_id })))
    expect(await fx.gw.query("SELECT email FROM accounts WHERE id = $1", account_id)).toEqual([{ email: null }])
    return k
  }]
]

const chatBody = (stream: boolean, content = "a tokenised question <EMAIL_1_ab12>") =>
  JSON.stringify({
    model: "local-chat",
    messages: [{ role: "user", content }],
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
  })

const relay = async (apiKey: string, body: string) =>
  fetch(`${fx.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
    body
  })

const relayOk = async (apiKey: string) => {
  const res = await relay(apiKey, chatBody(false))
  expect(res.status).toBe(200)
  await res.arrayBuffer()
}

const decode = (header: string | null) => JSON.parse(Buffer.from(header!, "base64").toString("utf8"))

/** The stream's trailer: the `receipt-v2` event after `[DONE]`. */
const trailerOf = (text: string) => {
  const after = text.slice(text.indexOf("data: [DONE]\n\n") + "data: [DONE]\n\n".length)
  expect(after.startsWith("event: receipt-v2\ndata: ")).toBe(true)
  return JSON.parse(after.slice("event: receipt-v2\ndata: ".length).trim())
}

describe("every billed call is sealed, whatever made its key", () => {
  it.each(origins)("%s: v2 header and trailer, stored v1 by jti, chains continuous, debit, receipt.signed, failed receipt", async (_label, make) => {
    const origin = await make()
    const jwks = await fetchJwks(fx.gw.url)
    const [{ account_id: accountId }] = await fx.gw.query<{ account_id: string }>(
      "SELECT account_id FROM api_keys WHERE key_prefix = $1",
      origin.apiKey.slice(0, 10)
    )
    expect(accountId).toMatch(/^acct_[0-9a-f]{32}$/)
    const v1Chain = `tenant-${accountId}`
    // Calls made before (a rotated key's predecessors) set where both chains stand.
    const v2Before = await fx.gw.query<{ n: string }>("SELECT count(*)::text AS n FROM receipts_v2 WHERE org_id = $1", origin.orgId)
    const v1Before = await fx.gw.query<{ n: string }>("SELECT count(*)::text AS n FROM receipts_v1 WHERE chain_id = $1", v1Chain)
    expect(Number(v2Before[0].n)).toBe(origin.predecessors?.length ?? 0)
    expect(Number(v1Before[0].n)).toBe(origin.predecessors?.length ?? 0)
    const balanceBefore = await balanceMicros(fx.gw, origin.orgId)

    // Non-streamed: the v2 header, its JTI, the v3 countersignature; the stored v1 has the same jti.
    const plain = await relay(origin.apiKey, chatBody(false))
    expect(plain.status).toBe(200)
    await plain.json()
    const v2 = decode(plain.headers.get("x-service-receipt-v2"))
    expect(plain.headers.get("x-service-receipt-v2-jti")).toBe(v2.jti)
    expect(v2.chain).toMatchObject({ chain_id: `receipt-v2-org-${origin.orgId}`, seq: Number(v2Before[0].n) + 1 })
    expect(await independentlyVerify(v2, jwks)).toBe(true)
    expect(decode(plain.headers.get("x-service-receipt-v3"))).toMatchObject({ v: "v3-countersignature", receipt_jti: v2.jti })

    // Streamed: the trailer is the next v2 receipt of the same chain.
    const streamed = await relay(origin.apiKey, chatBody(true))
    expect(streamed.status).toBe(200)
    const trailer = trailerOf(await streamed.text())
    expect(trailer.chain).toMatchObject({ chain_id: `receipt-v2-org-${origin.orgId}`, seq: v2.chain.seq + 1, prev_hash: independentHash(v2) })
    expect(await independentlyVerify(trailer, jwks)).toBe(true)

    // Stored v1 for both calls, by jti, in the key's account chain, continuing from its predecessors without a gap.
    const v1 = await fx.gw.query<{ jti: string; seq: string | number; envelope: any }>(
      "SELECT jti, seq, envelope FROM receipts_v1 WHERE chain_id = $1 ORDER BY seq",
      v1Chain
    )
    const envelopes = v1.map((r) => (typeof r.envelope === "string" ? JSON.parse(r.envelope) : r.envelope))
    expect(v1.map((r) => Number(r.seq))).toEqual(Array.from({ length: v1.length }, (_, i) => i + 1))
    expect(v1.slice(-2).map((r) => r.jti)).toEqual([v2.jti, trailer.jti])
    for (let i = 1; i < envelopes.length; i++) expect(envelopes[i].chain.prev_hash).toBe(independentHash(envelopes[i - 1]))
    for (const envelope of envelopes) expect(await independentlyVerify(envelope, jwks)).toBe(true)

    // Usage points at the receipts, the wallet is debited by exactly the billed amounts, and receipt.signed fired.
    const usage = await fx.gw.query<{ receipt_jti: string | null; billed: string }>(
      "SELECT receipt_jti, billed_micros::text AS billed FROM usage_records WHERE org_id = $1 ORDER BY finished_at, id",
      origin.orgId
    )
    expect(usage.slice(-2).map((u) => u.receipt_jti)).toEqual([v2.jti, trailer.jti])
    expect(usage.every((u) => u.receipt_jti !== null)).toBe(true)
    const billed = usage.slice(-2).reduce((sum, u) => sum + BigInt(u.billed), 0n)
    expect(billed > 0n).toBe(true)
    expect(await balanceMicros(fx.gw, origin.orgId)).toBe(balanceBefore - billed)
    const signed = await fx.gw.query<{ data: any }>("SELECT data FROM outbox_events WHERE org_id = $1 AND event = 'receipt.signed'", origin.orgId)
    const signedEvents = signed.map((e) => (typeof e.data === "string" ? JSON.parse(e.data) : e.data))
    expect(signedEvents.filter((e) => e.jti === v2.jti || e.jti === trailer.jti).sort((a, b) => a.seq - b.seq)).toEqual([
      expect.objectContaining({ jti: v2.jti, v1_chain_id: v1Chain }),
      expect.objectContaining({ jti: trailer.jti, v1_chain_id: v1Chain })
    ])

    // A failed authenticated call gets its failed receipt.
    const failedBody = JSON.stringify({ model: "no-such-model", messages: [{ role: "user", content: "x" }] })
    const failed = await relay(origin.apiKey, failedBody)
    expect(failed.status).toBe(404)
    expect(decode(failed.headers.get("x-service-receipt-failed"))).toMatchObject({
      outcome: "failed",
      error_code: "model_not_found",
      chain: { chain_id: `failed-v2-org-${origin.orgId}` }
    })

    // The operator's check agrees: nothing billed without a receipt.
    expect((await run(checkLedger)).usage_without_receipt.count).toBe(0)
  })
})
