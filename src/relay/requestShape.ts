import type { AttestationRoute } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import type { Capability } from "../providers/provider.ts"

/** What the relay needs from a request body; the body itself is relayed unchanged. */
export interface RelayRequestShape {
  readonly model: string
  readonly stream: boolean
  /** The client's output cap (max_tokens / max_completion_tokens), used to size the wallet hold. */
  readonly maxOutputTokens: number | undefined
}

export type ShapeProblem = { readonly path: string; readonly message: string }

export const capabilityOf: Record<AttestationRoute, Capability> = {
  "chat.completions": "chat",
  messages: "messages",
  embeddings: "embeddings"
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const checkMessages = (messages: unknown, route: AttestationRoute): ShapeProblem | undefined => {
  if (!Array.isArray(messages) || messages.length === 0) return { path: "messages", message: `"messages" must be a non-empty array.` }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    if (!isObject(m)) return { path: `messages[${i}]`, message: "Each message must be an object." }
    if (typeof m.role !== "string") return { path: `messages[${i}].role`, message: `"role" must be a string.` }
    const c = m.content
    const contentOk = typeof c === "string" || Array.isArray(c) || (route === "chat.completions" && c === null && m.role === "assistant")
    if (!contentOk) return { path: `messages[${i}].content`, message: `"content" must be a string or an array of content parts.` }
  }
  return undefined
}

/**
 * Validates the parts of a relay body the gateway depends on (model, messages/input, stream, token caps) and
 * nothing more: every other field is the provider's business and travels untouched.
 */
export const readRelayShape = (route: AttestationRoute, body: unknown): RelayRequestShape | ShapeProblem => {
  if (!isObject(body)) return { path: "$", message: "The request body must be a JSON object." }
  if (typeof body.model !== "string" || body.model.length === 0 || body.model.length > 200) {
    return { path: "model", message: `"model" must be a non-empty string of at most 200 characters.` }
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    return { path: "stream", message: `"stream" must be a boolean.` }
  }
  if (route === "embeddings") {
    const input = body.input
    const ok = typeof input === "string" || (Array.isArray(input) && input.length > 0)
    if (!ok) return { path: "input", message: `"input" must be a string or a non-empty array.` }
    if (body.stream === true) return { path: "stream", message: "Embeddings cannot be streamed." }
  } else {
    const problem = checkMessages(body.messages, route)
    if (problem) return problem
  }
  const capField = route === "messages" ? "max_tokens" : body.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens"
  const cap = body[capField]
  if (cap !== undefined && cap !== null && !(Number.isInteger(cap) && (cap as number) > 0)) {
    return { path: capField, message: `"${capField}" must be a positive integer.` }
  }
  if (route === "messages" && cap === undefined) return { path: "max_tokens", message: `"max_tokens" is required on the messages route.` }
  return { model: body.model, stream: body.stream === true, maxOutputTokens: typeof cap === "number" ? cap : undefined }
}

export const isShapeProblem = (v: RelayRequestShape | ShapeProblem): v is ShapeProblem => "path" in v
