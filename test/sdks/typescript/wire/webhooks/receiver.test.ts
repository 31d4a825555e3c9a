import { createHmac } from "node:crypto"
import Stripe from "stripe"
import { describe, expect, it } from "vitest"
import { encodeDeliveryBody, type WebhookPayload } from "../../../../../sdks/typescript/src/wire/webhooks/payload.ts"
import { createDeduper, verifyV0, verifyV1 } from "../../../../../sdks/typescript/src/wire/webhooks/receiver.ts"
import { signV0, signV1 } from "../../../../../sdks/typescript/src/wire/webhooks/signature.ts"

const secret = "whsec_receiver_secret"
const t = 1_700_000_000
const payload: WebhookPayload = { event: "billing.credit_added", event_id: "e4b1a0f2-8c3d-4e5f-9a6b-7c8d9e0f1a2b", timestamp: t, data: { amount_micros: 10_000_000 } }
const body = encodeDeliveryBody(payload)

describe("verifyV1", () => {
  it("accepts our own signature within the window, on either side of t", async () => {
    const header = await signV1(secret, t, body)
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: true })
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t + 300 })).toEqual({ ok: true })
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t - 300 })).toEqual({ ok: true })
  })

  it("accepts a header produced by Stripe's own test signer (independent implementation)", async () => {
    const header = new Stripe("sk_test_x").webhooks.generateTestHeaderString({ payload: body, secret, timestamp: t })
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: true })
  })

  it("rejects a tampered body", async () => {
    const header = await signV1(secret, t, body)
    const tampered = body.replace("10000000", "99000000")
    expect(tampered).not.toBe(body)
    expect(await verifyV1({ header, rawBody: tampered, secret, nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" })
  })

  it("rejects a wrong secret", async () => {
    const header = await signV1(secret, t, body)
    expect(await verifyV1({ header, rawBody: body, secret: "whsec_other", nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" })
  })

  it("rejects a stale or future timestamp beyond the tolerance", async () => {
    const header = await signV1(secret, t, body)
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t + 301 })).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" })
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t - 301 })).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" })
    expect(await verifyV1({ header, rawBody: body, secret, nowSeconds: t + 301, toleranceSeconds: 600 })).toEqual({ ok: true })
  })

  it("rejects a signature moved to another timestamp (t is part of the signed string)", async () => {
    const header = await signV1(secret, t, body)
    const moved = header.replace(`t=${t}`, `t=${t + 1000}`)
    expect(await verifyV1({ header: moved, rawBody: body, secret, nowSeconds: t + 1000 })).toEqual({ ok: false, reason: "signature_mismatch" })
  })

  it("accepts when any of several v1 entries matches, and ignores unknown schemes", async () => {
    const header = await signV1(secret, t, body)
    const good = header.split("v1=")[1]!
    const multi = `t=${t},v1=${"0".repeat(64)},v0=whatever,v1=${good}`
    expect(await verifyV1({ header: multi, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: true })
  })

  it("reports missing and malformed headers", async () => {
    const mac = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")
    expect(await verifyV1({ header: undefined, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "missing_header" })
    expect(await verifyV1({ header: "", rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "missing_header" })
    expect(await verifyV1({ header: `v1=${mac}`, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_header" })
    expect(await verifyV1({ header: `t=abc,v1=${mac}`, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_header" })
    expect(await verifyV1({ header: `t=${t},t=${t},v1=${mac}`, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_header" })
    expect(await verifyV1({ header: `t=${t}`, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "no_signature" })
    expect(await verifyV1({ header: `t=${t},v1=${mac.slice(0, 63)}`, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" })
  })
})

describe("verifyV0", () => {
  it("accepts our v0 signature even when the body was re-serialised with another key order", async () => {
    const header = await signV0(secret, payload)
    expect(await verifyV0({ header, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: true })
    const pretty = JSON.stringify({ timestamp: t, data: payload.data, event_id: payload.event_id, event: payload.event }, null, 2)
    expect(await verifyV0({ header, rawBody: pretty, secret, nowSeconds: t + 5 })).toEqual({ ok: true })
  })

  it("rejects a tampered body, a wrong secret, a stale payload timestamp and bad input", async () => {
    const header = await signV0(secret, payload)
    expect(await verifyV0({ header, rawBody: body.replace("10000000", "10000001"), secret, nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" })
    expect(await verifyV0({ header, rawBody: body, secret: "whsec_other", nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" })
    expect(await verifyV0({ header, rawBody: body, secret, nowSeconds: t + 301 })).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" })
    expect(await verifyV0({ header: undefined, rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "missing_header" })
    expect(await verifyV0({ header: "md5=abcd", rawBody: body, secret, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_header" })
    expect(await verifyV0({ header, rawBody: "{not json", secret, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_body" })
  })

  it("requires the payload timestamp that v0 relies on for replay protection", async () => {
    const withoutTimestamp = { event: "webhook.test", event_id: "x", data: {} }
    const header = await signV0(secret, withoutTimestamp)
    expect(await verifyV0({ header, rawBody: JSON.stringify(withoutTimestamp), secret, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_body" })
  })
})

describe("createDeduper", () => {
  it("reports a key as seen on repeat within the TTL and forgets it after", () => {
    let now = 0
    const deduper = createDeduper({ ttlMs: 1000, now: () => now })
    expect(deduper.seen("a")).toBe(false)
    expect(deduper.seen("a")).toBe(true)
    expect(deduper.seen("b")).toBe(false)
    now = 999
    expect(deduper.seen("a")).toBe(true)
    now = 1000
    expect(deduper.seen("a")).toBe(false) // expired, recorded afresh at 1000
    expect(deduper.seen("b")).toBe(false)
    expect(deduper.size()).toBe(2)
    now = 1500
    expect(deduper.seen("a")).toBe(true)
  })

  it("defaults to remembering keys for 24 hours", () => {
    let now = 0
    const deduper = createDeduper({ now: () => now })
    deduper.seen("k")
    now = 24 * 60 * 60 * 1000 - 1
    expect(deduper.seen("k")).toBe(true)
    now = 24 * 60 * 60 * 1000
    expect(deduper.seen("k")).toBe(false)
  })

  it("prunes expired keys so memory is bounded by the keys of one TTL window", () => {
    let now = 0
    const deduper = createDeduper({ ttlMs: 100, now: () => now })
    for (let i = 0; i < 50; i++) deduper.seen(`key-${i}`)
    expect(deduper.size()).toBe(50)
    now = 100
    deduper.seen("fresh")
    expect(deduper.size()).toBe(1)
  })
})
