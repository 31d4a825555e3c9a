import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createLicence, createOrg, createPortalToken } from "../../../layers/AdminOperations.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { type FakeStripe, startFakeStripe } from "../../support/fake-stripe.ts"

/** A fresh organisation and a portal token with `abilities` on it. */
const portalOrg = async (gw: TestGateway, abilities = "ability:billing.read,ability:billing.write") => {
  const { org_id } = await gw.runtime.runPromise(createOrg({ name: "billing-test" }))
  const { token } = await gw.runtime.runPromise(createPortalToken({ org_id, abilities }))
  return { orgId: org_id as string, token: token as string }
}

const call = (gw: TestGateway, method: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
  })

const balance = async (gw: TestGateway, orgId: string) =>
  BigInt((await gw.query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", orgId))[0].b)

const ledgerOk = async (gw: TestGateway) =>
  gw.query(`SELECT w.org_id FROM wallets w LEFT JOIN ledger_entries e ON e.org_id = w.org_id
    GROUP BY w.org_id, w.balance_micros HAVING w.balance_micros <> COALESCE(SUM(e.amount_micros), 0)`)

describe("development payments (no Stripe key)", () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway()
  })
  afterAll(async () => {
    await gw.close()
  })

  it.each(["/api/v1/billing/topup", "/api/billing/topup", "/api/billing/checkout/topup"])(
    "%s creates a pending checkout and credits nothing yet",
    async (path) => {
      const { orgId, token } = await portalOrg(gw)
      const res = await call(gw, "POST", path, token, { amount_usd: "10.00" })
      expect(res.status).toBe(201)
      const json = await res.json()
      expect(json).toMatchObject({ amount_micros: 10_000_000, amount_usd: "10.000000", status: "pending", provider: "dev" })
      expect(json.checkout_id).toMatch(/^chk_[0-9a-f]{32}$/)
      expect(json.checkout_url).toBe(`${gw.env.PUBLIC_BASE_URL ?? json.checkout_url.split("/api/")[0]}/api/v1/billing/dev/checkouts/${json.checkout_id}/complete`)
      expect(await balance(gw, orgId)).toBe(0n)
    }
  )

  it.each([
    ["a number", 10],
    ["three decimals", "10.005"],
    ["below the minimum", "4.99"],
    ["above the maximum", "10000.01"],
    ["a negative amount", "-5"]
  ])("rejects amount_usd as %s with 400 invalid_request", async (_label, amount) => {
    const { token } = await portalOrg(gw)
    const res = await call(gw, "POST", "/api/v1/billing/topup", token, { amount_usd: amount })
    expect(res.status).toBe(400)
    const json = await res.json()
    expect(json.error.code).toBe("invalid_request")
    expect(json.error.details.path).toBe("amount_usd")
  })

  it("needs ability:billing.write to top up", async () => {
    const { token } = await portalOrg(gw, "ability:billing.read")
    const res = await call(gw, "POST", "/api/v1/billing/topup", token, { amount_usd: "10.00" })
    expect(res.status).toBe(403)
    expect((await res.json()).error.code).toBe("insufficient_ability")
    expect((await call(gw, "POST", "/api/v1/billing/topup", undefined, { amount_usd: "10.00" })).status).toBe(401)
  })

  it("confirming a dev checkout twice credits the wallet once, as a topup with billing.credit_added", async () => {
    const { orgId, token } = await portalOrg(gw)
    const { checkout_id } = await (await call(gw, "POST", "/api/v1/billing/topup", token, { amount_usd: "12.34" })).json()
    const first = await call(gw, "POST", `/api/v1/billing/dev/checkouts/${checkout_id}/complete`, token)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ checkout_id, status: "completed", credited: true })
    const again = await call(gw, "POST", `/api/v1/billing/dev/checkouts/${checkout_id}/complete`, token)
    expect(await again.json()).toEqual({ checkout_id, status: "completed", credited: false })
    expect(await balance(gw, orgId)).toBe(12_340_000n)
    const ledger = await gw.query<{ kind: string; amount: string }>("SELECT kind, amount_micros::text AS amount FROM ledger_entries WHERE org_id = $1", orgId)
    expect(ledger).toEqual([{ kind: "topup", amount: "12340000" }])
    const events = await gw.query<{ data: any }>("SELECT data FROM outbox_events WHERE org_id = $1 AND event = 'billing.credit_added'", orgId)
    expect(events).toHaveLength(1)
    expect(events[0].data).toMatchObject({ kind: "topup", amount_micros: 12_340_000, balance_micros: 12_340_000 })
    expect(await ledgerOk(gw)).toEqual([])
  })

  it("concurrent confirmations of one checkout still credit once", async () => {
    const { orgId, token } = await portalOrg(gw)
    const { checkout_id } = await (await call(gw, "POST", "/api/v1/billing/topup", token, { amount_usd: "5.00" })).json()
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call(gw, "POST", `/api/v1/billing/dev/checkouts/${checkout_id}/complete`, token).then((r) => r.json()))
    )
    expect(results.filter((r) => r.credited === true)).toHaveLength(1)
    expect(await balance(gw, orgId)).toBe(5_000_000n)
  })

  it("another organisation cannot confirm the checkout (404), and the Stripe webhook route is 404 without Stripe", async () => {
    const a = await portalOrg(gw)
    const b = await portalOrg(gw)
    const { checkout_id } = await (await call(gw, "POST", "/api/v1/billing/topup", a.token, { amount_usd: "5.00" })).json()
    expect((await call(gw, "POST", `/api/v1/billing/dev/checkouts/${checkout_id}/complete`, b.token)).status).toBe(404)
    expect(await balance(gw, a.orgId)).toBe(0n)
    expect((await call(gw, "POST", "/api/v1/billing/webhooks/stripe", undefined, "{}", { "stripe-signature": "t=1,v1=00" })).status).toBe(404)
  })

  describe("licence codes", () => {
    it("a licence redeems once: credit as licence_credit with billing.credit_added, then 409 licence_already_redeemed", async () => {
      const { orgId, token } = await portalOrg(gw)
      const other = await portalOrg(gw)
      const licence = await gw.runtime.runPromise(createLicence({ usd: "25" }))
      expect(licence.code).toMatch(/^PRL1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
      const res = await call(gw, "POST", "/api/billing/redeem-license", token, { code: licence.code })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ licence_id: licence.licence_id, amount_micros: 25_000_000, balance_micros: 25_000_000 })
      const twice = await call(gw, "POST", "/api/billing/redeem-license", token, { code: licence.code })
      expect(twice.status).toBe(409)
      expect((await twice.json()).error.code).toBe("licence_already_redeemed")
      // nor by anyone else
      expect((await call(gw, "POST", "/api/billing/redeem-license", other.token, { code: licence.code })).status).toBe(409)
      expect(await balance(gw, orgId)).toBe(25_000_000n)
      expect(await balance(gw, other.orgId)).toBe(0n)
      const kinds = await gw.query<{ kind: string }>("SELECT kind FROM ledger_entries WHERE org_id = $1", orgId)
      expect(kinds).toEqual([{ kind: "licence_credit" }])
      const events = await gw.query("SELECT 1 FROM outbox_events WHERE org_id = $1 AND event = 'billing.credit_added'", orgId)
      expect(events).toHaveLength(1)
    })

    it("concurrent redemptions of one code credit once", async () => {
      const { orgId, token } = await portalOrg(gw)
      const { code } = await gw.runtime.runPromise(createLicence({ usd: "3" }))
      const statuses = await Promise.all(Array.from({ length: 6 }, () => call(gw, "POST", "/api/billing/redeem-license", token, { code }).then((r) => r.status)))
      expect(statuses.filter((s) => s === 200)).toHaveLength(1)
      expect(statuses.filter((s) => s === 409)).toHaveLength(5)
      expect(await balance(gw, orgId)).toBe(3_000_000n)
    })

    it("a tampered or foreign code is 400 invalid_licence and credits nothing", async () => {
      const { orgId, token } = await portalOrg(gw)
      const { code } = await gw.runtime.runPromise(createLicence({ usd: "1" }))
      const [prefix, payload, sig] = code.split(".")
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString())
      const inflated = Buffer.from(JSON.stringify({ ...claims, usd: "1000.000000" })).toString("base64url")
      // The altered signature must differ from the real one (a signature ending in "AA" made this test pass a valid code).
      const altered = `${sig.slice(0, -2)}${sig.endsWith("AA") ? "BA" : "AA"}`
      for (const bad of [`${prefix}.${inflated}.${sig}`, `${prefix}.${payload}.${altered}`, "not-a-code"]) {
        const res = await call(gw, "POST", "/api/billing/redeem-license", token, { code: bad })
        expect(res.status).toBe(400)
        expect((await res.json()).error.code).toBe("invalid_licence")
      }
      expect(await balance(gw, orgId)).toBe(0n)
    })
  })

  describe("ledger and usage reads", () => {
    it("pages the ledger newest first with a cursor, for ability:billing.read only", async () => {
      const { orgId, token } = await portalOrg(gw)
      for (const usd of ["1", "2", "3"]) await gw.runtime.runPromise(createLicence({ usd })).then(({ code }) => call(gw, "POST", "/api/billing/redeem-license", token, { code }))
      const page1 = await (await call(gw, "GET", "/api/v1/billing/ledger?limit=2", token)).json()
      expect(page1.entries.map((e: any) => e.amount_micros)).toEqual([3_000_000, 2_000_000])
      expect(page1.next_cursor).not.toBeNull()
      const page2 = await (await call(gw, "GET", `/api/v1/billing/ledger?limit=2&cursor=${page1.next_cursor}`, token)).json()
      expect(page2.entries.map((e: any) => e.amount_micros)).toEqual([1_000_000])
      expect(page2.next_cursor).toBeNull()
      expect(page2.entries[0]).toMatchObject({ kind: "licence_credit", amount_usd: "1.000000" })
      const { token: writeOnly } = await gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:billing.write" }))
      expect((await call(gw, "GET", "/api/v1/billing/ledger", writeOnly)).status).toBe(403)
      expect((await call(gw, "GET", "/api/v1/billing/ledger?limit=0", token)).status).toBe(400)
    })

    it("summarises usage by day and model and pages the records", async () => {
      const { orgId, token } = await portalOrg(gw)
      const insert = (id: string, model: string, finished: string, billed: number) =>
        gw.query(`INSERT INTO usage_records (id, request_id, gateway_request_id, org_id, key_id, provider, model, capability, key_mode,
          input_tokens, output_tokens, upstream_cost_micros, billed_micros, markup_micros, trace_id, started_at, finished_at)
          VALUES ($1, $1, $1, $2, 'key_x', 'local', $3, 'chat.completions', 'pooled', 10, 5, 1, $4, 0, 't', $5, $5)`, id, orgId, model, billed, finished)
      await insert("use_a", "local-chat", "2030-01-02T10:00:00Z", 100)
      await insert("use_b", "local-chat", "2030-01-02T11:00:00Z", 200)
      await insert("use_c", "local-embed", "2030-01-02T12:00:00Z", 50)
      await insert("use_d", "local-chat", "2030-01-03T09:00:00Z", 400)
      const res = await call(gw, "GET", "/api/v1/billing/usage?from=2030-01-01&to=2030-01-04&limit=3", token)
      expect(res.status).toBe(200)
      const json = await res.json()
      expect(json.summary).toEqual([
        { day: "2030-01-03", provider: "local", model: "local-chat", calls: 1, input_tokens: 10, output_tokens: 5, billed_micros: 400, billed_usd: "0.000400" },
        { day: "2030-01-02", provider: "local", model: "local-chat", calls: 2, input_tokens: 20, output_tokens: 10, billed_micros: 300, billed_usd: "0.000300" },
        { day: "2030-01-02", provider: "local", model: "local-embed", calls: 1, input_tokens: 10, output_tokens: 5, billed_micros: 50, billed_usd: "0.000050" }
      ])
      expect(json.failures).toEqual([])
      expect(json.records.map((r: any) => r.id)).toEqual(["use_d", "use_c", "use_b"])
      const next = await (await call(gw, "GET", `/api/v1/billing/usage?from=2030-01-01&to=2030-01-04&limit=3&cursor=${json.next_cursor}`, token)).json()
      expect(next.records.map((r: any) => r.id)).toEqual(["use_a"])
      expect(next.next_cursor).toBeNull()
    })

    it("counts the calls refused after the key was accepted (failed-call receipts) per day and code, for the organisation only", async () => {
      const { orgId, token } = await portalOrg(gw)
      const { orgId: otherOrg } = await portalOrg(gw)
      let seq = 0
      const failed = (org: string, status: number, code: string, at: string) =>
        gw.query(`INSERT INTO receipts_failed (jti, org_id, key_id, chain_id, seq, status, error_code, envelope, created_at)
          VALUES ($1, $2, 'key_x', $3, $4, $5, $6, '{}'::jsonb, $7)`, crypto.randomUUID().replaceAll("-", ""), org, `failed-v2-org-${org}`, ++seq, status, code, at)
      await failed(orgId, 403, "insufficient_scope", "2030-02-02T10:00:00Z")
      await failed(orgId, 403, "insufficient_scope", "2030-02-02T11:00:00Z")
      await failed(orgId, 402, "insufficient_balance", "2030-02-02T12:00:00Z")
      await failed(orgId, 502, "upstream_error", "2030-02-03T09:00:00Z")
      await failed(orgId, 502, "upstream_error", "2030-02-09T09:00:00Z") // after `to`
      await failed(otherOrg, 403, "insufficient_scope", "2030-02-02T10:00:00Z")
      const json = await (await call(gw, "GET", "/api/v1/billing/usage?from=2030-02-01&to=2030-02-04", token)).json()
      expect(json.failures).toEqual([
        { day: "2030-02-03", status: 502, error_code: "upstream_error", calls: 1 },
        { day: "2030-02-02", status: 402, error_code: "insufficient_balance", calls: 1 },
        { day: "2030-02-02", status: 403, error_code: "insufficient_scope", calls: 2 }
      ])
    })
  })
})

describe("Stripe payments (against a local fake Stripe)", () => {
  let gw: TestGateway
  let stripe: FakeStripe
  beforeAll(async () => {
    stripe = await startFakeStripe()
    gw = await startTestGateway(stripe.env)
  })
  afterAll(async () => {
    await gw.close()
    await stripe.close()
  })

  const topup = async (token: string, amount = "20.00") => {
    const res = await call(gw, "POST", "/api/v1/billing/topup", token, { amount_usd: amount })
    expect(res.status).toBe(201)
    return res.json()
  }

  it("creates a Checkout Session whose metadata names the organisation and the checkout", async () => {
    const { orgId, token } = await portalOrg(gw)
    const json = await topup(token)
    expect(json.provider).toBe("stripe")
    const session = stripe.sessions.find((s) => s.form["metadata[checkout_id]"] === json.checkout_id)!
    expect(session).toBeDefined()
    expect(json.checkout_url).toBe(`https://checkout.stripe.test/pay/${session.id}`)
    expect(session.form).toMatchObject({
      mode: "payment",
      "metadata[org_id]": orgId,
      "payment_intent_data[metadata][org_id]": orgId,
      "line_items[0][price_data][currency]": "usd",
      "line_items[0][price_data][unit_amount]": "2000"
    })
    expect(session.idempotencyKey).toBe(json.checkout_id)
    expect(session.authorization).toMatch(/^Bearer sk_test_/)
  })

  it("a checkout.session.completed webhook delivered twice credits once, and payment_intent.succeeded for it adds nothing", async () => {
    const { orgId, token } = await portalOrg(gw)
    const { checkout_id } = await topup(token, "20.00")
    const metadata = { org_id: orgId, checkout_id }
    const completed = stripe.signedEvent("checkout.session.completed", {
      id: "cs_x", object: "checkout.session", payment_status: "paid", amount_total: 2000, payment_intent: "pi_123", metadata
    })
    const deliver = (e: { body: string; signature: string }) =>
      call(gw, "POST", "/api/v1/billing/webhooks/stripe", undefined, e.body, { "stripe-signature": e.signature })
    const first = await deliver(completed)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ received: true, type: "checkout.session.completed", credited: true })
    expect(await (await deliver(completed)).json()).toMatchObject({ credited: false })
    const succeeded = stripe.signedEvent("payment_intent.succeeded", { id: "pi_123", object: "payment_intent", amount_received: 2000, metadata })
    expect(await (await deliver(succeeded)).json()).toMatchObject({ credited: false })
    expect(await balance(gw, orgId)).toBe(20_000_000n)
    const ledger = await gw.query<{ kind: string; reference: string }>("SELECT kind, reference FROM ledger_entries WHERE org_id = $1", orgId)
    expect(ledger).toEqual([{ kind: "topup", reference: `payment:${checkout_id}` }])
    const payment = await gw.query<{ status: string; payment_ref: string }>("SELECT status, payment_ref FROM payments WHERE id = $1", checkout_id)
    expect(payment).toEqual([{ status: "completed", payment_ref: "stripe:pi_123" }])
    expect(await gw.query("SELECT 1 FROM outbox_events WHERE org_id = $1 AND event = 'billing.credit_added'", orgId)).toHaveLength(1)
  })

  it("refuses a bad signature with 400 invalid_signature and credits nothing", async () => {
    const { orgId, token } = await portalOrg(gw)
    const { checkout_id } = await topup(token)
    const forged = stripe.signedEvent("payment_intent.succeeded", {
      id: "pi_f", object: "payment_intent", amount_received: 2000, metadata: { org_id: orgId, checkout_id }
    }, "whsec_wrong")
    for (const signature of [forged.signature, undefined]) {
      const res = await call(gw, "POST", "/api/v1/billing/webhooks/stripe", undefined, forged.body, signature ? { "stripe-signature": signature } : {})
      expect(res.status).toBe(400)
      expect((await res.json()).error.code).toBe("invalid_signature")
    }
    expect(await balance(gw, orgId)).toBe(0n)
  })

  it("ignores unpaid sessions and amounts that differ from the checkout", async () => {
    const { orgId, token } = await portalOrg(gw)
    const { checkout_id } = await topup(token, "20.00")
    const metadata = { org_id: orgId, checkout_id }
    for (const object of [
      { id: "cs_u", object: "checkout.session", payment_status: "unpaid", amount_total: 2000, metadata },
      { id: "cs_w", object: "checkout.session", payment_status: "paid", amount_total: 1, metadata }
    ]) {
      const e = stripe.signedEvent("checkout.session.completed", object)
      const res = await call(gw, "POST", "/api/v1/billing/webhooks/stripe", undefined, e.body, { "stripe-signature": e.signature })
      expect(await res.json()).toMatchObject({ received: true, credited: false })
    }
    expect(await balance(gw, orgId)).toBe(0n)
  })

  it("has no dev confirmation route", async () => {
    const { token } = await portalOrg(gw)
    const { checkout_id } = await topup(token)
    expect((await call(gw, "POST", `/api/v1/billing/dev/checkouts/${checkout_id}/complete`, token)).status).toBe(404)
  })
})
