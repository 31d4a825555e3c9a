/**
 * An Anthropic Messages request rewritten as an Amazon Bedrock Converse request, structurally: the system prompt
 * becomes `system` text blocks, content blocks become Converse content blocks (`text`, `image`, `toolUse`,
 * `toolResult`), caps and sampling move into `inferenceConfig`, tools into `toolConfig`. The model id travels in
 * the URL (`/model/{modelId}/converse`), never in the body, and so does the choice of streaming. The text inside
 * is copied, never read. A field Converse cannot express is refused (`UntranslatableField`), not dropped.
 *
 * Shapes: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html (request),
 * API_runtime_ContentBlock, API_runtime_ImageBlock, API_runtime_ToolResultBlock, API_runtime_ToolConfiguration,
 * API_runtime_ToolChoice, API_runtime_InferenceConfiguration (same folder).
 *
 * OpenAI clients reach Converse through this function too: their body is first rewritten as an Anthropic request
 * (`openaiRequestToAnthropic`), because Converse's message model (alternating user/assistant turns, tool results
 * as blocks of the next user turn, a separate system prompt) is Anthropic's.
 */
import { untranslatable } from "../translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const HANDLED = new Set(["model", "messages", "system", "max_tokens", "stop_sequences", "stream", "tools", "tool_choice", "metadata", "temperature", "top_p"])

/** Converse's ImageFormat values; the Messages API names the same formats as media types. */
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp"
}

const blocksOf = (content: unknown, path: string): Array<Json> => {
  if (typeof content === "string") return [{ type: "text", text: content }]
  if (!Array.isArray(content)) return untranslatable(path, `"content" must be a string or an array of blocks`)
  return content.map((b, i) => (isObject(b) ? b : untranslatable(`${path}[${i}]`, "a content block must be an object")))
}

const textBlock = (block: Json, path: string): Json =>
  typeof block.text === "string" ? { text: block.text } : untranslatable(`${path}.text`, `"text" must be a string`)

/** Converse takes image bytes (base64 in its JSON protocol) or an S3 location; a URL it cannot fetch. */
const imageBlock = (block: Json, path: string): Json => {
  const source = block.source
  if (!isObject(source) || source.type !== "base64" || typeof source.data !== "string") {
    return untranslatable(`${path}.source`, "only base64 images can be sent to Amazon Bedrock (it cannot fetch image URLs)")
  }
  const format = typeof source.media_type === "string" ? IMAGE_FORMATS[source.media_type] : undefined
  if (format === undefined) return untranslatable(`${path}.source.media_type`, "Amazon Bedrock takes png, jpeg, gif and webp images only")
  return { image: { format, source: { bytes: source.data } } }
}

const toolResultBlock = (block: Json, path: string): Json => {
  if (typeof block.tool_use_id !== "string") return untranslatable(`${path}.tool_use_id`, `"tool_use_id" must be a string`)
  const raw = block.content
  const content = raw === undefined || raw === null
    ? []
    : typeof raw === "string"
    ? [{ text: raw }]
    : Array.isArray(raw)
    ? raw.map((b, i) => {
      const p = `${path}.content[${i}]`
      if (isObject(b) && b.type === "text") return textBlock(b, p)
      if (isObject(b) && b.type === "image") return imageBlock(b, p)
      return untranslatable(p, "only text and image blocks in a tool_result can be translated")
    })
    : untranslatable(`${path}.content`, `"content" must be a string or an array of blocks`)
  return {
    toolResult: {
      toolUseId: block.tool_use_id,
      // Converse requires at least one content block; an empty result is an empty text.
      content: content.length > 0 ? content : [{ text: "" }],
      ...(block.is_error === true ? { status: "error" } : {})
    }
  }
}

const contentOf = (role: "user" | "assistant", content: unknown, path: string): Array<Json> => {
  const out: Array<Json> = []
  blocksOf(content, path).forEach((block, i) => {
    const p = `${path}[${i}]`
    switch (block.type) {
      case "text":
        out.push(textBlock(block, p))
        return
      case "image":
        out.push(imageBlock(block, p))
        return
      case "tool_use":
        if (role !== "assistant") break
        if (typeof block.id !== "string" || typeof block.name !== "string") return untranslatable(p, "a tool_use block needs an id and a name")
        out.push({ toolUse: { toolUseId: block.id, name: block.name, input: block.input ?? {} } })
        return
      case "tool_result":
        if (role !== "user") break
        out.push(toolResultBlock(block, p))
        return
      case "thinking":
      case "redacted_thinking":
        // Reasoning of an earlier turn belongs to the model that produced it (as in the other translations).
        if (role === "assistant") return
    }
    untranslatable(`${p}.type`, `content block type "${String(block.type).slice(0, 32)}" has no Bedrock Converse counterpart here`)
  })
  return out
}

const systemOf = (system: unknown): Array<Json> | undefined => {
  if (system === undefined || system === null) return undefined
  if (typeof system === "string") return system === "" ? undefined : [{ text: system }]
  if (!Array.isArray(system)) return untranslatable("system", `"system" must be a string or an array of text blocks`)
  return system.map((b, i) => (isObject(b) && b.type === "text" ? textBlock(b, `system[${i}]`) : untranslatable(`system[${i}]`, "only text blocks in a system prompt can be translated")))
}

const toolsOf = (tools: unknown): Array<Json> => {
  if (!Array.isArray(tools)) return untranslatable("tools", `"tools" must be an array`)
  return tools.map((tool, i) => {
    if (!isObject(tool) || typeof tool.name !== "string" || (tool.type !== undefined && tool.type !== "custom") || !isObject(tool.input_schema)) {
      return untranslatable(`tools[${i}]`, "only client tools with a name and input_schema can be translated")
    }
    return {
      toolSpec: {
        name: tool.name,
        ...(typeof tool.description === "string" ? { description: tool.description } : {}),
        inputSchema: { json: tool.input_schema }
      }
    }
  })
}

const toolChoiceOf = (choice: unknown): Json | undefined => {
  if (choice === undefined || choice === null) return undefined
  if (!isObject(choice)) return untranslatable("tool_choice", `"tool_choice" must be an object`)
  // Converse has no switch for parallel tool calls: refusing beats answering with a behaviour not asked for.
  if (choice.disable_parallel_tool_use === true) {
    return untranslatable("tool_choice.disable_parallel_tool_use", "Amazon Bedrock Converse cannot switch off parallel tool calls")
  }
  switch (choice.type) {
    case "auto":
      return { auto: {} }
    case "any":
      return { any: {} }
    case "tool":
      if (typeof choice.name === "string") return { tool: { name: choice.name } }
      break
    case "none":
      return untranslatable("tool_choice", `Amazon Bedrock Converse has no "none" tool choice (leave the tools out instead)`)
  }
  return untranslatable("tool_choice", `"tool_choice" has no Bedrock Converse counterpart`)
}

/** The Converse body for an Anthropic Messages body (its `model` and `stream` select the URL, not the body). */
export const anthropicRequestToConverse = (body: Json): Json => {
  for (const key of Object.keys(body)) {
    if (!HANDLED.has(key)) untranslatable(key, `"${key.slice(0, 64)}" has no Bedrock Converse counterpart`)
  }
  const messages = (body.messages as Array<Json>).map((m, i) => {
    const path = `messages[${i}].content`
    if (m.role !== "user" && m.role !== "assistant") {
      return untranslatable(`messages[${i}].role`, `role "${String(m.role).slice(0, 32)}" has no Bedrock Converse counterpart`)
    }
    return { role: m.role, content: contentOf(m.role, m.content, path) }
  })
  const inference: Json = {}
  if (typeof body.max_tokens === "number") inference.maxTokens = body.max_tokens
  if (body.temperature !== undefined && body.temperature !== null) inference.temperature = body.temperature
  if (body.top_p !== undefined && body.top_p !== null) inference.topP = body.top_p
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) inference.stopSequences = body.stop_sequences

  const out: Json = { messages }
  const system = systemOf(body.system)
  if (system !== undefined) out.system = system
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference
  const toolChoice = toolChoiceOf(body.tool_choice)
  if (body.tools !== undefined && body.tools !== null) {
    const tools = toolsOf(body.tools)
    if (tools.length > 0) out.toolConfig = { tools, ...(toolChoice === undefined ? {} : { toolChoice }) }
  } else if (toolChoice !== undefined) {
    untranslatable("tool_choice", `"tool_choice" needs "tools"`)
  }
  // requestMetadata is Converse's place for caller-supplied labels (it filters invocation logs, like user_id).
  if (isObject(body.metadata) && typeof body.metadata.user_id === "string") out.requestMetadata = { user_id: body.metadata.user_id }
  return out
}
