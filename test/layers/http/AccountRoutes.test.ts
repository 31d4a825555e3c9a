import { createServer, type AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeSmtp } from "../../support/fakeSmtp.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway({ TRUSTED_PROXIES: "127.0.0.1,::ffff:127.0.0.1" })
})
afterAll(() => gw.close())

let nextIp = 1
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": `198.18.0.${nextIp++}`, ...headers },
    body: JSON.stringify(body)
  })

/** The newest verification link the development outbox holds for this address. */
const linkFor = async (email: string) => {
  const mails = await gw.query<{ body_text: string }>(
    "SELECT body_text FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id DESC",
    email
  )
  const m = /(http\S+\/api\/v1\/account\/verify\?token=[A-Za-z0-9_-]+)/.exec(mails[0]?.body_text ?? "")
  if (m === null) throw new Error(`no verification mail for ${email}`)
  return m[1]
}

const balanceOf = async (orgId: string) =>
  (await gw.query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", orgId))[0].b

const eventsOf = (orgId: string) =>
  gw.query<{ event: string; data: any }>("SELECT event, data FROM outbox_events WHERE org_id = $1 ORDER BY created_at, id", orgId)

export const login = async (email: string, password: string) => {
  const res = await post("/api/v1/portal/login", { email, password })
  const cookies = res.headers.getSetCookie()
  const jar = cookies.map((c) => c.split(";")[0]).join("; ")
  return { res, cookies, jar, body: res.status === 200 ? await res.json() : await res.json() }
}

describe("sign-up and e-mail verification", () => {
  it("signs up, mails a link that credits $2 once, and answers 410 on the second click", async () => {
    const res = await post("/api/v1/accounts", { email: "grace@example.org", password: "correct horse battery", organisation_name: "Hopper Labs" })
    expect(res.status).toBe(201)
    const { account_id, org_id, email_verified } = await res.json()
    expect(email_verified).toBe(false)
    expect(await gw.query("SELECT role FROM memberships WHERE account_id = $1", account_id)).toEqual([{ role: "owner" }])
    const stored = await gw.query<{ password_hash: string }>("SELECT password_hash FROM accounts WHERE id = $1", account_id)
    expect(stored[0].password_hash).toMatch(/^scrypt\$17\$8\$1\$/)
    expect(stored[0].password_hash).not.toContain("correct horse")

    const link = await linkFor("grace@example.org")
    expect(link.startsWith(gw.url) || link.startsWith("http://127.0.0.1")).toBe(true)
    const path = new URL(link).pathname + new URL(link).search
    const first = await fetch(`${gw.url}${path}`)
    expect(first.status).toBe(200)
    expect(await first.json()).toMatchObject({ verified: true, account_id, trial_credited: true, trial_credit_micros: 2_000_000 })
    expect(await balanceOf(org_id)).toBe("2000000")

    const second = await fetch(`${gw.url}${path}`)
    expect(second.status).toBe(410)
    expect(await second.json()).toEqual({ error: { code: "verification_link_used", message: "This verification link has already been used." } })
    expect(await balanceOf(org_id)).toBe("2000000")
    const ledger = await gw.query<{ kind: string; amount: string; reference: string }>(
      "SELECT kind, amount_micros::text AS amount, reference FROM ledger_entries WHERE org_id = $1",
      org_id
    )
    expect(ledger).toEqual([{ kind: "trial_credit", amount: "2000000", reference: `trial:${account_id}` }])
    expect((await eventsOf(org_id)).map((e) => e.event)).toEqual(["user.created", "billing.credit_added"])
    expect(await gw.query("SELECT email_verified FROM accounts WHERE id = $1", account_id)).toEqual([{ email_verified: true }])
  })

  it("credits once even when a second link is verified for the same account", async () => {
    const { account_id, org_id } = await (await post("/api/v1/accounts", { email: "twice@example.org", password: "long enough pw" })).json()
    // Two links in flight; the first use marks the other one used as well.
    expect((await post("/api/v1/account/verification", { email: "twice@example.org" })).status).toBe(202)
    const links = await gw.query<{ body_text: string }>("SELECT body_text FROM mail_outbox WHERE to_address = $1 ORDER BY id", "twice@example.org")
    expect(links).toHaveLength(2)
    const paths = links.map((l) => new URL(/(http\S+)/.exec(l.body_text)![1]).search)
    const answers = await Promise.all(paths.map((q) => fetch(`${gw.url}/api/v1/account/verify${q}`)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 410])
    expect(await balanceOf(org_id)).toBe("2000000")
    expect(await gw.query("SELECT 1 FROM trial_credits WHERE account_id = $1", account_id)).toHaveLength(1)
  })

  it("lets a self-service account ask for the link, verify with a password and then sign in", async () => {
    const issued = await post("/api/v1/self-service/key", { email: "self@example.org" })
    expect(issued.status).toBe(201)
    expect((await post("/api/v1/account/verification", { email: "self@example.org" })).status).toBe(202)
    const token = new URL(await linkFor("self@example.org")).searchParams.get("token")
    const verified = await post("/api/v1/account/verify", { token, password: "a fine passphrase" })
    expect(verified.status).toBe(200)
    const body = await verified.json()
    expect(body.trial_credited).toBe(true)
    expect(await balanceOf(body.org_id)).toBe("2000000")
    const session = await login("self@example.org", "a fine passphrase")
    expect(session.res.status).toBe(200)
    expect(session.body.role).toBe("owner")
  })

  it("answers 202 without mailing for unknown or verified addresses, and 409 for a taken e-mail", async () => {
    const before = (await gw.query("SELECT id FROM mail_outbox")).length
    expect((await post("/api/v1/account/verification", { email: "nobody@example.org" })).status).toBe(202)
    expect((await post("/api/v1/account/verification", { email: "grace@example.org" })).status).toBe(202)
    expect(await gw.query("SELECT id FROM mail_outbox")).toHaveLength(before)
    const taken = await post("/api/v1/accounts", { email: "GRACE@example.org", password: "another password" })
    expect(taken.status).toBe(409)
    expect((await taken.json()).error.code).toBe("account_exists")
  })

  it.each([
    [{ email: "x@example.org", password: "short" }, "password"],
    [{ email: "not-an-email", password: "long enough pw" }, "email"],
    [{ email: "y@example.org", password: "long enough pw", tier: "pro" }, "tier"]
  ])("refuses a sign-up %j with 400 invalid_request", async (body, path) => {
    const res = await post("/api/v1/accounts", body)
    expect(res.status).toBe(400)
    expect((await res.json()).error.details.path).toBe(path)
  })

  it("answers 404 for an unknown verification token", async () => {
    const res = await fetch(`${gw.url}/api/v1/account/verify?token=nonsense`)
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: { code: "verification_link_invalid", message: "This verification link is not valid." } })
  })
})

describe("memberships, sub-organisations and erasure", () => {
  it("adds an existing user (org.member_added) and invites a new one (user.created + link)", async () => {
    const owner = await (await post("/api/v1/accounts", { email: "owner@example.org", password: "owner password" })).json()
    const other = await (await post("/api/v1/accounts", { email: "colleague@example.org", password: "colleague pw!" })).json()
    const ownerSession = await login("owner@example.org", "owner password")
    const csrf = ownerSession.body.csrf_token
    const add = (email: string, role: string) =>
      post(`/api/v1/orgs/${owner.org_id}/members`, { email, role }, { cookie: ownerSession.jar, "x-csrf-token": csrf })

    const existing = await add("colleague@example.org", "member")
    expect(existing.status).toBe(201)
    expect(await existing.json()).toMatchObject({ account_id: other.account_id, created: false, role: "member", verification_email_sent: false })
    expect((await add("colleague@example.org", "admin")).status).toBe(409)

    const invited = await add("newbie@example.org", "admin")
    expect(invited.status).toBe(201)
    const newbie = await invited.json()
    expect(newbie).toMatchObject({ created: true, verification_email_sent: true })
    expect(newbie.verification).toBeUndefined()
    await linkFor("newbie@example.org")

    const events = (await eventsOf(owner.org_id)).map((e) => [e.event, e.data.account_id])
    expect(events).toEqual([
      ["user.created", owner.account_id],
      ["org.member_added", other.account_id],
      ["user.created", newbie.account_id]
    ])
    // the colleague can now sign in to the owner's organisation as a member, read keys but not create them
    const colleague = await post("/api/v1/portal/login", { email: "colleague@example.org", password: "colleague pw!", org_id: owner.org_id })
    expect(colleague.status).toBe(200)
    const c = await colleague.json()
    expect(c.role).toBe("member")
    const jar = colleague.headers.getSetCookie().map((x) => x.split(";")[0]).join("; ")
    expect((await fetch(`${gw.url}/api/v1/keys`, { headers: { cookie: jar } })).status).toBe(200)
    const denied = await post("/api/keys", {}, { cookie: jar, "x-csrf-token": c.csrf_token })
    expect(denied.status).toBe(403)
    expect((await denied.json()).error.code).toBe("insufficient_ability")
  })

  it("creates a sub-organisation with its own keys, one level deep", async () => {
    const owner = await (await post("/api/v1/accounts", { email: "partner@example.org", password: "partner password" })).json()
    const s = await login("partner@example.org", "partner password")
    const h = { cookie: s.jar, "x-csrf-token": s.body.csrf_token }
    const sub = await post("/api/v1/orgs", { name: "Customer A" }, h)
    expect(sub.status).toBe(201)
    const { org_id, parent_id } = await sub.json()
    expect(parent_id).toBe(owner.org_id)
    const key = await post("/api/keys", { org_id, name: "customer-a" }, h)
    expect(key.status).toBe(201)
    expect(await gw.query("SELECT org_id FROM api_keys WHERE id = $1", (await key.json()).id)).toEqual([{ org_id }])
    expect(await gw.query("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", org_id)).toEqual([{ b: "0" }])
  })

  it("erases a user's personal data on DELETE /api/v1/account and fires user.deleted", async () => {
    const { account_id, org_id } = await (await post("/api/v1/accounts", { email: "leaving@example.org", password: "leaving password" })).json()
    const s = await login("leaving@example.org", "leaving password")
    const noCsrf = await fetch(`${gw.url}/api/v1/account`, { method: "DELETE", headers: { cookie: s.jar } })
    expect(noCsrf.status).toBe(403)
    const res = await fetch(`${gw.url}/api/v1/account`, { method: "DELETE", headers: { cookie: s.jar, "x-csrf-token": s.body.csrf_token } })
    expect(res.status).toBe(204)
    expect(await gw.query("SELECT email, password_hash, deleted_at IS NOT NULL AS gone FROM accounts WHERE id = $1", account_id)).toEqual([
      { email: null, password_hash: null, gone: true }
    ])
    expect(await gw.query("SELECT 1 FROM mail_outbox WHERE to_address = 'leaving@example.org'")).toHaveLength(0)
    expect(await gw.query("SELECT 1 FROM portal_sessions WHERE account_id = $1", account_id)).toHaveLength(0)
    expect((await eventsOf(org_id)).map((e) => e.event)).toContain("user.deleted")
    expect((await login("leaving@example.org", "leaving password")).res.status).toBe(401)
    // the old session cookie is dead too
    expect((await fetch(`${gw.url}/api/v1/account`, { headers: { cookie: s.jar } })).status).toBe(401)
    // the address is free again
    expect((await post("/api/v1/accounts", { email: "leaving@example.org", password: "coming back pw" })).status).toBe(201)
  })
})

describe("sign-up while the mail server is down", () => {
  let mailGw: TestGateway
  let smtpPort: number
  beforeAll(async () => {
    // A port nothing listens on (yet): the gateway's SMTP server is down.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()))
    smtpPort = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    mailGw = await startTestGateway({ TRUSTED_PROXIES: "127.0.0.1,::ffff:127.0.0.1", SMTP_URL: `smtp://127.0.0.1:${smtpPort}` })
  })
  afterAll(() => mailGw.close())

  const postTo = (path: string, body: unknown) =>
    fetch(`${mailGw.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `198.19.0.${nextIp++}` },
      body: JSON.stringify(body)
    })

  it("creates the account and says the link was not sent; the link is asked for again once mail works, and verifies", async () => {
    const email = "ada@example.org"
    const res = await postTo("/api/v1/accounts", { email, password: "analytical engine 1843" })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(body).toMatchObject({ email_verified: false, verification_email_sent: false })
    expect(body.verification).toContain("POST /api/v1/account/verification")
    // The account is whole (not half-made): its organisation, its owner membership, user.created, and sign-in works.
    expect(await mailGw.query("SELECT role FROM memberships WHERE account_id = $1", body.account_id)).toEqual([{ role: "owner" }])
    expect((await mailGw.query<{ event: string }>("SELECT event FROM outbox_events WHERE org_id = $1", body.org_id)).map((e) => e.event)).toEqual(["user.created"])
    expect((await fetch(`${mailGw.url}/api/v1/portal/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `198.19.0.${nextIp++}` },
      body: JSON.stringify({ email, password: "analytical engine 1843" })
    })).status).toBe(200)
    // Signing up again is refused: the account exists (the user asks for the link instead).
    expect((await (await postTo("/api/v1/accounts", { email, password: "analytical engine 1843" })).json()).error.code).toBe("account_exists")

    // Still down: asking for the link says so.
    const down = await postTo("/api/v1/account/verification", { email })
    expect(down.status).toBe(503)
    expect((await down.json()).error.code).toBe("mail_unavailable")

    // The mail server is back: the link is sent, and it verifies the account and grants the trial credit.
    const smtp = await startFakeSmtp(smtpPort)
    try {
      expect((await postTo("/api/v1/account/verification", { email })).status).toBe(202)
      expect(smtp.messages).toHaveLength(1)
      expect(smtp.messages[0]).toContain(`To: ${email}`)
      // The body is quoted-printable: soft line breaks and "=" written as "=3D".
      const text = smtp.messages[0]!.replace(/=\r\n/g, "").replace(/=3D/g, "=")
      const token = /verify\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1]
      expect(token).toBeDefined()
      const verified = await fetch(`${mailGw.url}/api/v1/account/verify?token=${token}`)
      expect(verified.status).toBe(200)
      expect(await verified.json()).toMatchObject({ verified: true, account_id: body.account_id, trial_credited: true })
    } finally {
      await smtp.close()
    }
  })

  it("an invitation is not failed by the mail server: the member is added, the answer says the link did not go out, and it is sent again once mail works", async () => {
    const owner = await (await postTo("/api/v1/accounts", { email: "grace@example.org", password: "compiler a-0 1952" })).json()
    const session = await fetch(`${mailGw.url}/api/v1/portal/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `198.19.0.${nextIp++}` },
      body: JSON.stringify({ email: "grace@example.org", password: "compiler a-0 1952" })
    })
    const jar = session.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
    const csrf = (await session.json()).csrf_token
    const invite = await fetch(`${mailGw.url}/api/v1/orgs/${owner.org_id}/members`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: jar, "x-csrf-token": csrf, "x-forwarded-for": `198.19.0.${nextIp++}` },
      body: JSON.stringify({ email: "kathleen@example.org", role: "member" })
    })
    expect(invite.status).toBe(201)
    const body = await invite.json()
    expect(body).toMatchObject({ created: true, verification_email_sent: false, role: "member" })
    expect(body.verification).toContain("POST /api/v1/account/verification")
    expect(await mailGw.query("SELECT role FROM memberships WHERE account_id = $1 AND org_id = $2", body.account_id, owner.org_id)).toEqual([{ role: "member" }])

    const smtp = await startFakeSmtp(smtpPort)
    try {
      expect((await postTo("/api/v1/account/verification", { email: "kathleen@example.org" })).status).toBe(202)
      expect(smtp.messages).toHaveLength(1)
      expect(smtp.messages[0]).toContain("To: kathleen@example.org")
    } finally {
      await smtp.close()
    }
  })
})
