/**
 * Errors on an Anthropic route (the local proxy's `/v1/messages`, the SDK's `client.fetch` for the Anthropic SDK) in
 * Anthropic's error shape, so an Anthropic client reads them as it reads Anthropic's own:
 * `{"type":"error","error":{"type":"<anthropic type>","message":"..."}}`. The body also keeps our stable `code`
 * inside `error` (docs/errors.md), and repeats the message at the top level: the official SDK builds its error's
 * `message` from a top-level `message` and otherwise prints the whole body as JSON. One copy for the proxy and the SDK.
 */

/** Anthropic's error type for an HTTP status (its documented types; anything else by class). */
export const anthropicErrorType = (status: number): string => {
  switch (status) {
    case 401:
      return "authentication_error"
    case 402:
      return "billing_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 413:
      return "request_too_large"
    case 429:
      return "rate_limit_error"
    case 504:
      return "timeout_error"
    case 529:
      return "overloaded_error"
    default:
      return status >= 500 ? "api_error" : "invalid_request_error"
  }
}

export const anthropicErrorBody = (
  status: number,
  code: string,
  message: string,
  extra: Readonly<Record<string, unknown>> = {}
) => ({
  type: "error",
  error: { ...extra, type: anthropicErrorType(status), code, message },
  message
})

/**
 * A gateway error answer re-shaped for `/v1/messages`: our envelope `{"error":{"code","message",...}}` becomes
 * the Anthropic shape with the same code, message and fields. Anything else (already Anthropic-shaped, not
 * JSON, no code) is returned unchanged.
 */
export const anthropicErrorText = (status: number, text: string): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text
  }
  if (typeof parsed !== "object" || parsed === null || (parsed as { type?: unknown }).type === "error") return text
  const error = (parsed as { error?: unknown }).error
  if (typeof error !== "object" || error === null) return text
  const { code, message, ...extra } = error as Record<string, unknown>
  if (typeof code !== "string" || typeof message !== "string") return text
  return JSON.stringify(anthropicErrorBody(status, code, message, extra))
}
