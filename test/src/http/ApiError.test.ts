import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { apiErrorResponse, causeToResponse } from "../../../layers/http/errorResponse.ts"
import { ApiError, errorEnvelope } from "../../../src/http/ApiError.ts"
import { Cause } from "effect"
import { documentedErrors, UNIT_ONLY_CODES } from "../../support/errorCatalogue.ts"

const sample = () =>
  new ApiError({
    status: 403,
    code: "insufficient_scope",
    message: "This key's permissions do not include the scope this route needs.",
    extra: { type: "permission_error", required: ["completions"], granted: ["messages"] },
    headers: { "retry-after": "1" }
  })

describe("ApiError keeps its message however it is copied (issue 14)", () => {
  it("has message as an own enumerable field, so an object spread or JSON keeps it", () => {
    const error = sample()
    expect({ ...error }.message).toBe(error.message)
    expect(JSON.parse(JSON.stringify(error)).message).toBe(error.message)
    expect(new ApiError({ ...error }).toBody().error.message).toBe(error.message)
  })

  it("withHeaders copies status, code, message and extra and merges the headers", () => {
    const copy = sample().withHeaders({ "x-service-receipt-failed": "abc" })
    expect(copy).toBeInstanceOf(ApiError)
    expect(copy.toBody()).toEqual(sample().toBody())
    expect(copy.status).toBe(403)
    expect(copy.headers).toEqual({ "retry-after": "1", "x-service-receipt-failed": "abc" })
  })

  it("the envelope is { error: { code, message, ...extra } } and extra cannot overwrite code or message", () => {
    expect(errorEnvelope("model_not_found", "No such model.", { code: "x", message: "", details: { path: "model" } })).toEqual({
      error: { code: "model_not_found", message: "No such model.", details: { path: "model" } }
    })
  })

  it("a blank or missing message never reaches the wire empty: it names the code", () => {
    expect(errorEnvelope("upstream_error", "  ").error.message).toBe("Request refused (upstream_error).")
    expect(errorEnvelope("upstream_error", undefined as unknown as string).error.message).toBe("Request refused (upstream_error).")
  })
})

describe("codes only a bug can produce (covered here instead of over HTTP)", () => {
  it("each is documented in docs/errors.md", () => {
    const documented = documentedErrors()
    for (const code of UNIT_ONLY_CODES) expect(documented.has(code), code).toBe(true)
  })

  it("internal_error: an unexpected failure answers 500 with the documented code and a message quoting the request id", async () => {
    const response = await Effect.runPromise(causeToResponse(Cause.die(new Error("boom at /secret/path")), "req-123"))
    expect(response.status).toBe(documentedErrors().get("internal_error"))
    const body = JSON.parse(new TextDecoder().decode((response.body as { body: Uint8Array }).body))
    expect(body.error.code).toBe("internal_error")
    expect(body.error.message).toContain("req-123")
    expect(body.error.message).not.toContain("boom")
    expect(apiErrorResponse(sample()).headers["retry-after"]).toBe("1")
  })
})
