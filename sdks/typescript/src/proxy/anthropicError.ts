/** The Anthropic error shape of the proxy's `/v1/messages`: one copy, shared with the SDK's `client.fetch`. */
export { anthropicErrorBody, anthropicErrorText, anthropicErrorType } from "../wire/anthropicError.ts"
