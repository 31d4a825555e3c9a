import { createServer } from "node:http"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Stripe from "stripe"

/**
 * A local stand-in for the Stripe API (only `POST /v1/checkout/sessions`) plus signed webhook events, so the
 * gateway's Stripe layer runs unchanged against 127.0.0.1. `env` holds the settings pointing a gateway at it.
 */
export interface FakeStripe {
  readonly url: string
  readonly env: Record<string, string>
  /** Form bodies of the checkout sessions created, parsed to flat `a[b][c]` keys. */
  readonly sessions: Array<{ id: string; form: Record<string, string>; idempotencyKey: string | undefined; authorization: string | undefined }>
  /** A Stripe event of `type` about `object`, with its `Stripe-Signature` header (webhook secret of `env`). */
  readonly signedEvent: (type: string, object: Record<string, unknown>, secret?: string) => { body: string; signature: string }
  readonly close: () => Promise<void>
}

export const startFakeStripe = async (): Promise<FakeStripe> => {
  const secretKey = `sk_test_${crypto.randomUUID().replaceAll("-", "")}`
  const webhookSecret = `whsec_${crypto.randomUUID().replaceAll("-", "")}`
  const dir = mkdtempSync(join(tmpdir(), "fake-stripe-"))
  writeFileSync(join(dir, "key"), secretKey + "\n", { mode: 0o600 })
  writeFileSync(join(dir, "whsec"), webhookSecret + "\n", { mode: 0o600 })
  const sessions: FakeStripe["sessions"] = []
  let seq = 0
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      res.setHeader("content-type", "application/json")
      if (req.method !== "POST" || req.url !== "/v1/checkout/sessions") {
        res.statusCode = 404
        res.end(JSON.stringify({ error: { type: "invalid_request_error", message: "unknown route" } }))
        return
      }
      const form = Object.fromEntries(new URLSearchParams(raw))
      const id = `cs_test_${++seq}_${crypto.randomUUID().slice(0, 8)}`
      sessions.push({ id, form, idempotencyKey: req.headers["idempotency-key"] as string | undefined, authorization: req.headers.authorization })
      const metadata: Record<string, string> = {}
      for (const [k, v] of Object.entries(form)) {
        const m = /^metadata\[(.+)\]$/.exec(k)
        if (m) metadata[m[1]] = v
      }
      res.end(JSON.stringify({
        id,
        object: "checkout.session",
        mode: "payment",
        url: `https://checkout.stripe.test/pay/${id}`,
        amount_total: Number(form["line_items[0][price_data][unit_amount]"]),
        currency: "usd",
        metadata,
        payment_status: "unpaid",
        payment_intent: null
      }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  const url = `http://127.0.0.1:${address.port}`
  const stripe = new Stripe(secretKey)
  return {
    url,
    env: { STRIPE_SECRET_KEY_FILE: join(dir, "key"), STRIPE_WEBHOOK_SECRET_FILE: join(dir, "whsec"), STRIPE_API_BASE: url },
    sessions,
    signedEvent: (type, object, secret = webhookSecret) => {
      const body = JSON.stringify({
        id: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
        object: "event",
        type,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        data: { object }
      })
      return { body, signature: stripe.webhooks.generateTestHeaderString({ payload: body, secret }) }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
