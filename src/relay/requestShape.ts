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

/** The routes relayed, metered and sealed (token counting is answered apart: layers/relay/countTokens.ts). */
export type RelayRoute = Exclude<AttestationRoute, "messages.count_tokens">

export const capabilityOf: Record<AttestationRoute, Capability> = {
  "chat.completions": "chat",
  messages: "messages",
  embeddings: "embeddings",
  responses: "responses",
  "messages.count_tokens": "messages"
}

/**
 * OpenAI's built-in (hosted) tools: the provider runs them itself. Only a provider that serves the Responses API with
 * its hosted tools can take them (`UpstreamEndpoint.hostedTools`); elsewhere the call is refused, never relayed with
 * the tool silently dropped.
 */
export const HOSTED_TOOL_TYPES: ReadonlySet<string> = new Set([
  "web_search", "web_search_preview", "web_search_preview_2025_03_11", "web_search_2025_08_26", "file_search",
  "computer", "computer_use", "computer_use_preview", "code_interpreter", "image_generation", "mcp", "local_shell",
  "shell", "apply_patch", "tool_search"
])

/** Input items of hosted tools' calls and results (sent back in a later turn): only where hosted tools run. */
export const HOSTED_TOOL_ITEM_TYPES: ReadonlySet<string> = new Set([
  "web_search_call", "file_search_call", "computer_call", "computer_call_output", "code_interpreter_call",
  "image_generation_call", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
  "apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
  "mcp_call", "tool_search_call", "tool_search_output"
])

/** Input item types every provider can be given (natively, or translated): messages, function calls, reasoning. */
const PORTABLE_ITEM_TYPES: ReadonlySet<string> = new Set(["message", "function_call", "function_call_output", "reasoning", "item_reference"])

const MESSAGE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "system", "developer"])

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

const isString = (v: unknown): v is string => typeof v === "string"

/**
 * The first hosted tool a Responses body names (in `tools`, or as an input item sending back a hosted tool's call),
 * with its path; undefined when it uses none. Reads types only.
 */
export const firstHostedTool = (body: Record<string, unknown>): { readonly path: string; readonly type: string } | undefined => {
  if (Array.isArray(body.tools)) {
    for (let i = 0; i < body.tools.length; i++) {
      const type = (body.tools[i] as { type?: unknown } | null)?.type
      if (isString(type) && HOSTED_TOOL_TYPES.has(type)) return { path: `tools[${i}].type`, type }
    }
  }
  if (Array.isArray(body.input)) {
    for (let i = 0; i < body.input.length; i++) {
      const type = (body.input[i] as { type?: unknown } | null)?.type
      if (isString(type) && HOSTED_TOOL_ITEM_TYPES.has(type)) return { path: `input[${i}].type`, type }
    }
  }
  return undefined
}

/**
 * A Responses request's `input` and `tools`, by structure only (types and field presence; no text is read): a string,
 * or items of a type this gateway knows, each with the fields its type requires.
 */
const checkResponsesInput = (body: Record<string, unknown>): ShapeProblem | undefined => {
  const input = body.input
  if (!isString(input)) {
    if (!Array.isArray(input) || input.length === 0) return { path: "input", message: `"input" must be a string or a non-empty array of input items.` }
    for (let i = 0; i < input.length; i++) {
      const item = input[i]
      const at = `input[${i}]`
      if (!isObject(item)) return { path: at, message: "Each input item must be an object." }
      if (item.type !== undefined && !isString(item.type)) return { path: `${at}.type`, message: `"type" must be a string.` }
      const type = item.type ?? "message"
      if (!PORTABLE_ITEM_TYPES.has(type) && !HOSTED_TOOL_ITEM_TYPES.has(type)) {
        return { path: `${at}.type`, message: `Input item type "${type.slice(0, 64)}" is not one this gateway relays (message, function_call, function_call_output, reasoning, item_reference, or a hosted tool's call).` }
      }
      if (type === "message") {
        if (!isString(item.role) || !MESSAGE_ROLES.has(item.role)) return { path: `${at}.role`, message: `"role" must be one of user, assistant, system, developer.` }
        if (!isString(item.content) && !Array.isArray(item.content)) return { path: `${at}.content`, message: `"content" must be a string or an array of content parts.` }
        if (Array.isArray(item.content)) {
          for (let j = 0; j < item.content.length; j++) {
            const part = item.content[j]
            if (!isObject(part) || !isString(part.type)) return { path: `${at}.content[${j}]`, message: "Each content part must be an object with a string \"type\"." }
          }
        }
      } else if (type === "function_call") {
        for (const field of ["call_id", "name", "arguments"]) {
          if (!isString(item[field])) return { path: `${at}.${field}`, message: `A function_call item needs a string "${field}".` }
        }
      } else if (type === "function_call_output") {
        if (!isString(item.call_id)) return { path: `${at}.call_id`, message: `A function_call_output item needs a string "call_id".` }
        if (!isString(item.output) && !Array.isArray(item.output)) return { path: `${at}.output`, message: `"output" must be a string or an array of content parts.` }
      }
    }
  }
  if (body.instructions !== undefined && body.instructions !== null && !isString(body.instructions)) {
    return { path: "instructions", message: `"instructions" must be a string.` }
  }
  if (body.previous_response_id !== undefined && body.previous_response_id !== null && !isString(body.previous_response_id)) {
    return { path: "previous_response_id", message: `"previous_response_id" must be a string.` }
  }
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) return { path: "tools", message: `"tools" must be an array.` }
    for (let i = 0; i < body.tools.length; i++) {
      const tool = body.tools[i]
      if (!isObject(tool) || !isString(tool.type)) return { path: `tools[${i}]`, message: "Each tool must be an object with a string \"type\"." }
      if (tool.type === "function" && !isString(tool.name)) return { path: `tools[${i}].name`, message: `A function tool needs a string "name".` }
    }
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
  if (route === "responses") {
    const problem = checkResponsesInput(body)
    if (problem) return problem
  } else if (route === "embeddings") {
    const input = body.input
    const ok = typeof input === "string" || (Array.isArray(input) && input.length > 0)
    if (!ok) return { path: "input", message: `"input" must be a string or a non-empty array.` }
    if (body.stream === true) return { path: "stream", message: "Embeddings cannot be streamed." }
  } else {
    const problem = checkMessages(body.messages, route)
    if (problem) return problem
  }
  const capField = route === "messages" || route === "messages.count_tokens"
    ? "max_tokens"
    : route === "responses"
    ? "max_output_tokens"
    : body.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens"
  const cap = body[capField]
  if (cap !== undefined && cap !== null && !(Number.isInteger(cap) && (cap as number) > 0)) {
    return { path: capField, message: `"${capField}" must be a positive integer.` }
  }
  if (route === "messages" && cap === undefined) return { path: "max_tokens", message: `"max_tokens" is required on the messages route.` }
  return { model: body.model, stream: body.stream === true, maxOutputTokens: typeof cap === "number" ? cap : undefined }
}

export const isShapeProblem = (v: RelayRequestShape | ShapeProblem): v is ShapeProblem => "path" in v
