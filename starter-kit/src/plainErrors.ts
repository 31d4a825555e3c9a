/** What went wrong, in words a user can act on (the SDK's errors carry `status` and a stable `code`). */

interface ErrorLike {
  readonly status?: number
  readonly code?: string
  readonly message?: string
  readonly retryAfterSeconds?: number
}

export const plainWords = (error: unknown): string => {
  const e = (typeof error === "object" && error !== null ? error : {}) as ErrorLike
  switch (e.code) {
    case "insufficient_balance":
      return "The balance of this app's gateway account is used up, so nothing was sent. Top it up (in the portal's Billing page, or ask whoever runs this app), then press Retry."
    case "rate_limited":
      return e.retryAfterSeconds === undefined
        ? "Too many messages in a short time. Wait a moment, then press Retry."
        : `Too many messages in a short time. Wait ${e.retryAfterSeconds} s, then press Retry.`
    case "quota_exceeded":
      return `This account's monthly token quota is used up${e.retryAfterSeconds === undefined ? "" : ` (it frees up in ${e.retryAfterSeconds} s)`}. Nothing was sent.`
    case "pretokenised_required":
      return "The gateway refused the message because its on-device attestation did not check out (signature, body or time). Nothing was sent to the model. Check this computer's clock, then press Retry."
    case "engine_untrusted":
      return "The gateway does not accept this version of the on-device engine. Nothing was sent. Whoever runs this app must update it (a newer @privacy-relay/sdk) and rebuild."
    case "model_not_allowed":
      return "This app's gateway key may not use that model. Pick another model."
    case "insufficient_scope":
    case "demo_key_restricted":
      return "This app's gateway key is not allowed to make this call. Whoever runs this app must give the key the chat permission."
    case "invalid_key":
    case "key_revoked":
    case "key_expired":
      return "The gateway refused this app's key (wrong, expired or revoked). Whoever runs this app must fix its key file."
    case "name_model_unavailable":
      return "The on-device name detector could not run, so nothing was sent (personal data is never sent unprotected). Turn name detection off or reload the page."
    case "gateway_identity_failed":
    case "gateway_unreachable":
    case "connection_error":
      return "The gateway could not be reached. Check your connection (or that the gateway is running), then press Retry."
    case "timeout":
      return "The gateway took too long to answer. Press Retry."
    case "stream_error":
      return "The answer was cut off before it finished. Press Retry."
    case "not_tokenised":
      return "This app's server refused a message that was not tokenised on the device. Nothing was sent."
    case "file_too_large":
      return `The file is too large to read here (the limit is 20 MB).${e.message ? ` ${e.message}` : ""}`
    case "file_zip_bomb":
      return "The file would expand to far more than its size (a zip bomb?), so it was not read."
    case "file_unsupported_type":
      return "This kind of file cannot be read here. Attach a .docx, .xlsx, .pptx, .pdf, .csv, .txt, .md or .html file."
    case "file_malformed":
      return "The file could not be read: it is damaged or is not what its name says."
    case "file_encrypted":
      return "The file is password-protected. Save a copy without the password and attach that."
    case "too_long":
      return `Too long to tokenise in this browser: ${e.message ?? ""} Shorten it, or start a new conversation. Nothing was sent.`
    case "payload_too_large":
      return "The message (with its attachments) is too large to send."
  }
  if (e.status === 401) return "The gateway refused this app's key. Whoever runs this app must fix its key file."
  if (e.status === 402) return "The account is out of balance: top it up, then press Retry."
  if (e.status === 403) return `The gateway refused the call (${e.code ?? "forbidden"}). Nothing was sent to the model.`
  if (e.status !== undefined && e.status >= 500) return `The gateway or the model provider failed (${e.status}${e.code ? ` ${e.code}` : ""}). Press Retry.`
  return `Something went wrong: ${e.message ?? String(error)}`
}
