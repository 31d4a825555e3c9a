/**
 * An OpenAI chat completion request rewritten as an Anthropic Messages request, structurally: roles, content
 * parts, tools and caps move to their counterparts; the text inside them is copied, never read. A field the
 * Messages API cannot express is refused (`UntranslatableField`), not dropped.
 */
import { DEFAULT_HOLD_OUTPUT_TOKENS } from "../../billing/pricing.ts"
import { openaiFunctionTools, openaiToolCalls } from "./openaiToolCalls.ts"
import { untranslatable } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** Fields copied under the same name, fields renamed, and fields with no effect on the answer's content. */
const SAME = ["temperature", "top_p", "stream"] as const
const IGNORED = new Set(["model", "messages", "stream_options", "max_tokens", "max_completion_tokens", "stop", "tools", "tool_choice", "parallel_tool_calls", "user", "n"])

/** A data: URL image as a base64 source; any other URL as a url source. */
const imageBlock = (part: Json, path: string) => {
  const url = isObject(part.image_url) ? part.image_url.url : undefined
  if (typeof url !== "string") return untranslatable(`${path}.image_url.url`, `"image_url.url" must be a string`)
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  return m ? { type: "image", source: { type: "base64", media_type: m[1], data: m[2] } } : { type: "image", source: { type: "url", url } }
}

const contentBlocks = (content: unknown, path: string): Array<Json> => {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }]
  if (content === null || content === undefined) return []
  if (!Array.isArray(content)) return untranslatable(path, `"content" must be a string or an array of parts`)
  return content.map((part, i) => {
    const p = `${path}[${i}]`
    if (!isObject(part)) return untranslatable(p, "a content part must be an object")
    if (part.type === "text" && typeof part.text === "string") return { type: "text", text: part.text }
    if (part.type === "image_url") return imageBlock(part, p)
    return untranslatable(`${p}.type`, `content part type "${String(part.type).slice(0, 32)}" has no Anthropic Messages counterpart`)
  })
}

const toolUseBlocks = (toolCalls: unknown, path: string): Array<Json> =>
  openaiToolCalls(toolCalls, path).map(({ id, name, args }) => ({ type: "tool_use", id, name, input: args }))

/** A tool message's content as a tool_result's: a string stays a string, text parts become text blocks. */
const toolResultContent = (content: unknown, path: string): unknown =>
  typeof content === "string" ? content : contentBlocks(content, path)

const toolsOf = (tools: unknown): Array<Json> =>
  openaiFunctionTools(tools).map(({ name, description, parameters }) => ({
    name,
    ...(description !== undefined ? { description } : {}),
    input_schema: parameters ?? { type: "object", properties: {} }
  }))

const toolChoiceOf = (choice: unknown, parallel: unknown): Json | undefined => {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined || choice === null) return parallel === false ? { type: "auto", ...noParallel } : undefined
  if (choice === "auto") return { type: "auto", ...noParallel }
  if (choice === "required") return { type: "any", ...noParallel }
  if (choice === "none") return { type: "none" }
  if (isObject(choice) && choice.type === "function" && isObject(choice.function) && typeof choice.function.name === "string") {
    return { type: "tool", name: choice.function.name, ...noParallel }
  }
  return untranslatable("tool_choice", `"tool_choice" has no Anthropic Messages counterpart`)
}

export const openaiRequestToAnthropic = (body: Json, upstreamModel: string): Json => {
  for (const key of Object.keys(body)) {
    if (!IGNORED.has(key) && !(SAME as ReadonlyArray<string>).includes(key)) {
      untranslatable(key, `"${key.slice(0, 64)}" has no Anthropic Messages counterpart`)
    }
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) untranslatable("n", `"n" other than 1 cannot be translated`)

  const system: Array<Json> = []
  const messages: Array<{ role: "user" | "assistant"; content: Array<Json> }> = []
  /** Consecutive turns of one role are merged: Messages alternates user and assistant. */
  const append = (role: "user" | "assistant", blocks: Array<Json>) => {
    const last = messages[messages.length - 1]
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: blocks })
  }
  const list = body.messages as Array<Json>
  list.forEach((m, i) => {
    const path = `messages[${i}]`
    switch (m.role) {
      case "system":
      case "developer":
        system.push(...contentBlocks(m.content, `${path}.content`))
        return
      case "user":
        return append("user", contentBlocks(m.content, `${path}.content`))
      case "assistant":
        return append("assistant", [...contentBlocks(m.content, `${path}.content`), ...toolUseBlocks(m.tool_calls, `${path}.tool_calls`)])
      case "tool":
        if (typeof m.tool_call_id !== "string") return untranslatable(`${path}.tool_call_id`, `"tool_call_id" must be a string`)
        return append("user", [{ type: "tool_result", tool_use_id: m.tool_call_id, content: toolResultContent(m.content, `${path}.content`) }])
      default:
        return untranslatable(`${path}.role`, `role "${String(m.role).slice(0, 32)}" has no Anthropic Messages counterpart`)
    }
  })

  const out: Json = {
    model: upstreamModel,
    max_tokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_HOLD_OUTPUT_TOKENS,
    messages
  }
  if (system.length > 0) out.system = system
  for (const key of SAME) if (body[key] !== undefined && body[key] !== null) out[key] = body[key]
  if (typeof body.stop === "string") out.stop_sequences = [body.stop]
  else if (Array.isArray(body.stop)) out.stop_sequences = body.stop
  if (body.tools !== undefined && body.tools !== null) out.tools = toolsOf(body.tools)
  const toolChoice = toolChoiceOf(body.tool_choice, body.parallel_tool_calls)
  if (toolChoice !== undefined) out.tool_choice = toolChoice
  if (typeof body.user === "string") out.metadata = { user_id: body.user }
  return out
}
