// The chat's error messages: each refusal the gateway or the engine can give is put in words a user can act on.
import { describe, expect, it } from "vitest"
import { InsufficientBalanceError, PermissionDeniedError, PretokenisationRequiredError, RateLimitError } from "../../../sdks/typescript/src/index.ts"
import { plainWords } from "../../../starter-kit/src/plainErrors.ts"

describe("plainWords", () => {
  it("402: the balance is used up, with the top-up hint", () => {
    const error = new InsufficientBalanceError({ status: 402, code: "insufficient_balance", message: "no balance" })
    expect(plainWords(error)).toMatch(/balance .* used up.*Top it up/)
  })

  it("429: how long to wait, when the gateway said", () => {
    expect(plainWords(new RateLimitError({ status: 429, code: "rate_limited", message: "slow down", retryAfterSeconds: 17 }))).toContain("Wait 17 s")
    expect(plainWords(new RateLimitError({ status: 429, code: "rate_limited", message: "slow down" }))).toContain("Wait a moment")
  })

  it("428 and 403: what went wrong, and that nothing was sent", () => {
    expect(plainWords(new PretokenisationRequiredError({ status: 428, code: "pretokenised_required", message: "bad attestation" }))).toMatch(/attestation did not check out.*Nothing was sent/)
    expect(plainWords(new PermissionDeniedError({ status: 403, code: "engine_untrusted", message: "old engine" }))).toMatch(/does not accept this version.*Nothing was sent/)
    expect(plainWords(new PermissionDeniedError({ status: 403, code: "model_not_allowed", message: "no" }))).toContain("Pick another model")
    expect(plainWords(new PermissionDeniedError({ status: 403, code: "something_new", message: "no" }))).toContain("(something_new)")
  })

  it("anything else still gets a sentence, never an empty message", () => {
    expect(plainWords(new Error("boom"))).toBe("Something went wrong: boom")
    expect(plainWords("odd")).toBe("Something went wrong: odd")
  })
})
