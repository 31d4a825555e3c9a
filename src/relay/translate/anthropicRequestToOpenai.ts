/**
 * An Anthropic Messages request rewritten as an OpenAI chat completion request, structurally: the system prompt
 * becomes a system message, content blocks become content parts, tool_use/tool_result blocks become tool calls
 * and tool messages. The text inside is copied, never read. A field Chat Completions cannot express is refused
 * (`UntranslatableField`), not dropped.
 */
import { untranslatable } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const SAME = ["temperature", "top_p"] as const
const HANDLED = new Set(["model", "messages", "system", "max_tokens", "stop_sequences", "stream", "tools", "tool_choice", "metadata", ...SAME])

export interface OpenaiTargetOptions {
  /** The output cap's name upstream: OpenAI's own API wants `max_completion_tokens`, compatible APIs `max_tokens`. */
  readonly outputCapField: "max_tokens" | "max_completion_tokens"
}

const textPart = (block: Json, path: string) =>
  typeof block.text === "string" ? { type: "text", text: block.text } : untranslatable(`${path}.text`, `"text" must be a string`)

const imagePart = (block: Json, path: string) => {
  const source = block.source
  if (isObject(source) && source.type === "base64" && typeof source.media_type === "string" && typeof source.data === "string") {
    return { type: "image_url", image_url: { url: `data:${source.media_type};base64,${source.data}` } }
  }
  if (isObject(source) && source.type === "url" && typeof source.url === "string") return { type: "image_url", image_url: { url: source.url } }
  return untranslatable(`${path}.source`, "only base64 and url image sources can be translated")
}

/** Text of a tool_result: a string, or its text blocks joined (other blocks cannot travel in a tool message). */
const toolResultText = (content: unknown, path: string): string => {
  if (typeof content === "string") return content
  if (content === undefined || content === null) return ""
  if (!Array.isArray(content)) return untranslatable(path, `"content" must be a string or an array of blocks`)
  return content.map((b, i) =>
    isObject(b) && b.type === "text" && typeof b.text === "string"
      ? b.text
      : untranslatable(`${path}[${i}]`, "only text blocks in a tool_result can be translated")
  ).join("\n")
}

const blocksOf = (content: unknown, path: string): Array<Json> => {
  if (typeof content === "string") return [{ type: "text", text: content }]
  if (!Array.isArray(content)) return untranslatable(path, `"content" must be a string or an array of blocks`)
  return content.map((b, i) => (isObject(b) ? b : untranslatable(`${path}[${i}]`, "a content block must be an object")))
}

const userMessages = (content: unknown, path: string): Array<Json> => {
  const out: Array<Json> = []
  const parts: Array<Json> = []
  blocksOf(content, path).forEach((block, i) => {
    const p = `${path}[${i}]`
    if (block.type === "tool_result") {
      if (typeof block.tool_use_id !== "string") return untranslatable(`${p}.tool_use_id`, `"tool_use_id" must be a string`)
      // Tool messages answer the preceding assistant turn, so they come before the user's own parts.
      out.push({ role: "tool", tool_call_id: block.tool_use_id, content: toolResultText(block.content, `${p}.content`) })
    } else if (block.type === "text") parts.push(textPart(block, p))
    else if (block.type === "image") parts.push(imagePart(block, p))
    else untranslatable(`${p}.type`, `content block type "${String(block.type).slice(0, 32)}" has no Chat Completions counterpart`)
  })
  if (typeof content === "string") out.push({ role: "user", content })
  else if (parts.length > 0) out.push({ role: "user", content: parts })
  return out
}

const assistantMessage = (content: unknown, path: string): Json => {
  if (typeof content === "string") return { role: "assistant", content }
  const texts: Array<string> = []
  const toolCalls: Array<Json> = []
  blocksOf(content, path).forEach((block, i) => {
    const p = `${path}[${i}]`
    if (block.type === "text") texts.push(textPart(block, p).text)
    else if (block.type === "tool_use") {
      if (typeof block.id !== "string" || typeof block.name !== "string") return untranslatable(p, "a tool_use block needs an id and a name")
      toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } })
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      // Reasoning of an earlier turn belongs to the model that produced it; another format has no place for it.
    } else untranslatable(`${p}.type`, `content block type "${String(block.type).slice(0, 32)}" has no Chat Completions counterpart`)
  })
  return { role: "assistant", content: texts.length > 0 ? texts.join("") : null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }
}

const systemMessage = (system: unknown): Json | undefined => {
  if (system === undefined || system === null) return undefined
  if (typeof system === "string") return { role: "system", content: system }
  if (!Array.isArray(system)) return untranslatable("system", `"system" must be a string or an array of text blocks`)
  return { role: "system", content: system.map((b, i) => (isObject(b) && b.type === "text" ? textPart(b, `system[${i}]`) : untranslatable(`system[${i}]`, "only text blocks in a system prompt can be translated"))) }
}

const toolsOf = (tools: unknown): Array<Json> => {
  if (!Array.isArray(tools)) return untranslatable("tools", `"tools" must be an array`)
  return tools.map((tool, i) => {
    if (!isObject(tool) || typeof tool.name !== "string" || (tool.type !== undefined && tool.type !== "custom") || !isObject(tool.input_schema)) {
      return untranslatable(`tools[${i}]`, "only client tools with a name and input_schema can be translated")
    }
    return {
      type: "function",
      function: { name: tool.name, ...(typeof tool.description === "string" ? { description: tool.description } : {}), parameters: tool.input_schema }
    }
  })
}

const toolChoiceOf = (choice: unknown): { readonly tool_choice?: unknown; readonly parallel_tool_calls?: false } => {
  if (choice === undefined || choice === null) return {}
  if (!isObject(choice)) return untranslatable("tool_choice", `"tool_choice" must be an object`)
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false as const } : {}
  switch (choice.type) {
    case "auto":
      return { tool_choice: "auto", ...parallel }
    case "any":
      return { tool_choice: "required", ...parallel }
    case "none":
      return { tool_choice: "none" }
    case "tool":
      if (typeof choice.name === "string") return { tool_choice: { type: "function", function: { name: choice.name } }, ...parallel }
  }
  return untranslatable("tool_choice", `"tool_choice" has no Chat Completions counterpart`)
}

export const anthropicRequestToOpenai = (body: Json, upstreamModel: string, options: OpenaiTargetOptions): Json => {
  for (const key of Object.keys(body)) {
    if (!HANDLED.has(key)) untranslatable(key, `"${key.slice(0, 64)}" has no Chat Completions counterpart`)
  }
  const messages: Array<Json> = []
  const system = systemMessage(body.system)
  if (system !== undefined) messages.push(system)
  ;(body.messages as Array<Json>).forEach((m, i) => {
    const path = `messages[${i}].content`
    if (m.role === "user") messages.push(...userMessages(m.content, path))
    else if (m.role === "assistant") messages.push(assistantMessage(m.content, path))
    else untranslatable(`messages[${i}].role`, `role "${String(m.role).slice(0, 32)}" has no Chat Completions counterpart`)
  })
  const out: Json = { model: upstreamModel, messages, [options.outputCapField]: body.max_tokens }
  for (const key of SAME) if (body[key] !== undefined && body[key] !== null) out[key] = body[key]
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) out.stop = body.stop_sequences
  if (body.stream === true) {
    out.stream = true
    // Usage arrives only when asked for; the gateway meters from it.
    out.stream_options = { include_usage: true }
  }
  if (body.tools !== undefined && body.tools !== null) out.tools = toolsOf(body.tools)
  Object.assign(out, toolChoiceOf(body.tool_choice))
  if (isObject(body.metadata) && typeof body.metadata.user_id === "string") out.user = body.metadata.user_id
  return out
}
