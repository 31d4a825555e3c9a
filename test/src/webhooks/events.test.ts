import { describe, expect, it } from "vitest"
import { EVENT_CATALOGUE, EVENT_NAMESPACES, isCatalogueEvent, matchesSubscription, validateSubscription } from "../../../src/webhooks/events.ts"

describe("event catalogue", () => {
  it("lists the spec's 15 events and their namespaces", () => {
    expect(EVENT_CATALOGUE).toHaveLength(15)
    expect(EVENT_CATALOGUE).toContain("receipt.signed")
    expect(EVENT_CATALOGUE).toContain("org.member_added")
    expect(EVENT_CATALOGUE).toContain("subscriber.unsubscribed")
    expect(EVENT_CATALOGUE).toContain("webhook.test")
    expect([...EVENT_NAMESPACES].sort()).toEqual(["billing", "chain", "key", "org", "receipt", "subscriber", "user", "webhook"])
    expect(isCatalogueEvent("key.revoked")).toBe(true)
    expect(isCatalogueEvent("key.deleted")).toBe(false)
  })
})

describe("matchesSubscription", () => {
  it("matches exact names", () => {
    expect(matchesSubscription(["key.revoked"], "key.revoked")).toBe(true)
    expect(matchesSubscription(["key.revoked"], "key.created")).toBe(false)
  })

  it("* matches every event", () => {
    for (const event of EVENT_CATALOGUE) expect(matchesSubscription(["*"], event)).toBe(true)
  })

  it("prefix.* matches its namespace only, not a namespace sharing the prefix text", () => {
    expect(matchesSubscription(["billing.*"], "billing.low_balance")).toBe(true)
    expect(matchesSubscription(["billing.*"], "billing.invoice_paid")).toBe(true)
    expect(matchesSubscription(["billing.*"], "key.created")).toBe(false)
    expect(matchesSubscription(["user.*"], "user.created")).toBe(true)
    expect(matchesSubscription(["user.*"], "username.changed")).toBe(false)
  })

  it("matches nothing for an empty subscription", () => {
    expect(matchesSubscription([], "key.created")).toBe(false)
  })
})

describe("validateSubscription", () => {
  it("accepts catalogue names, * and known namespaces", () => {
    expect(validateSubscription(["*", "key.revoked", "billing.*", "webhook.test", "chain.*"])).toEqual([])
  })

  it("returns the unknown names, unknown namespaces and non-strings", () => {
    expect(validateSubscription(["key.revoked", "key.deleted", "payments.*", "billing", "*.paid", "billing.invoice.*", 7])).toEqual([
      "key.deleted",
      "payments.*",
      "billing",
      "*.paid",
      "billing.invoice.*",
      "7"
    ])
  })
})
