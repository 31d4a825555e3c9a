/**
 * OpenAI's Responses API rewritten as a chat completion and back, structurally, for a model whose provider has no
 * Responses endpoint (every other chat-capable provider: OpenAI-compatible ones directly, Anthropic, Gemini and
 * Bedrock through their chat completion translators). Items and parts move to messages and content parts, function
 * tools and calls to their chat counterparts; the text inside them is copied, never read. A field a chat completion
 * cannot express is refused (`UntranslatableField`), not dropped; fields that only ask the provider to keep or
 * label the response (`store`, `metadata`) do not change the answer and are left out.
 */
import { MalformedUpstream, untranslatable } from "./translationError.ts"
import { createSseEventReader } from "./sseEvents.ts"
import { chunkByChunk, type StreamTranslator } from "./streamTranslator.ts"

type Json = Record<string, any>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)
const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0)

/** Copied under the same name. */
const SAME = ["temperature", "top_p", "stream", "parallel_tool_calls"] as const
/** Handled below, or without effect on the answer (`store`, `metadata`, `truncation: "disabled"`, `stream_options`). */
const HANDLED = new Set([
  "model", "input", "instructions", "tools", "tool_choice", "max_output_tokens", "text", "user", "safety_identifier",
  "store", "metadata", "stream_options", "truncation", "include", "reasoning", "service_tier"
])

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/** A message item's content as chat content: a string, or parts (text and images; files where chat takes them). */
const chatContent = (content: unknown, path: string, role: string): unknown => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return untranslatable(path, `"content" must be a string or an array of parts`)
  const parts = content.map((part, j) => {
    const p = `${path}[${j}]`
    if (!isObject(part)) return untranslatable(p, "a content part must be an object")
    switch (part.type) {
      case "input_text":
      case "output_text":
      case "text":
        if (typeof part.text !== "string") return untranslatable(`${p}.text`, `"text" must be a string`)
        return { type: "text", text: part.text }
      case "input_image":
        if (typeof part.image_url !== "string") return untranslatable(`${p}.image_url`, "an input_image must carry its image_url (a file_id cannot be translated)")
        return { type: "image_url", image_url: { url: part.image_url, ...(typeof part.detail === "string" ? { detail: part.detail } : {}) } }
      case "input_file":
        if (typeof part.file_data !== "string") return untranslatable(p, "an input_file must carry its file_data (a file_id or file_url cannot be translated)")
        return { type: "file", file: { file_data: part.file_data, ...(typeof part.filename === "string" ? { filename: part.filename } : {}) } }
      default:
        return untranslatable(`${p}.type`, `content part type "${String(part.type).slice(0, 32)}" has no chat completion counterpart`)
    }
  })
  // An assistant turn's text as one string: every chat-compatible provider takes that for an assistant message.
  if (role === "assistant" && parts.every((p) => p.type === "text")) return parts.map((p) => p.text).join("")
  return parts
}

/** A function_call_output's output as a tool message's content. */
const toolContent = (output: unknown, path: string): unknown => (typeof output === "string" ? output : chatContent(output, path, "tool"))

const chatTools = (tools: unknown): Array<Json> | undefined => {
  if (tools === undefined || tools === null) return undefined
  return (tools as Array<Json>).map((tool, i) => {
    if (tool.type !== "function") return untranslatable(`tools[${i}].type`, `tool type "${String(tool.type).slice(0, 32)}" has no chat completion counterpart`)
    return {
      type: "function",
      function: {
        name: tool.name,
        ...(tool.description !== undefined && tool.description !== null ? { description: tool.description } : {}),
        ...(tool.parameters !== undefined && tool.parameters !== null ? { parameters: tool.parameters } : {}),
        ...(typeof tool.strict === "boolean" ? { strict: tool.strict } : {})
      }
    }
  })
}

const chatToolChoice = (choice: unknown): unknown => {
  if (choice === undefined || choice === null) return undefined
  if (choice === "auto" || choice === "none" || choice === "required") return choice
  if (isObject(choice) && choice.type === "function" && typeof choice.name === "string") return { type: "function", function: { name: choice.name } }
  return untranslatable("tool_choice", `"tool_choice" has no chat completion counterpart`)
}

const chatResponseFormat = (text: unknown): Json | undefined => {
  if (text === undefined || text === null) return undefined
  if (!isObject(text)) return untranslatable("text", `"text" must be an object`)
  for (const key of Object.keys(text)) if (key !== "format") untranslatable(`text.${key}`, `"text.${key.slice(0, 32)}" has no chat completion counterpart`)
  const format = text.format
  if (format === undefined || format === null || (isObject(format) && format.type === "text")) return undefined
  if (isObject(format) && format.type === "json_object") return { type: "json_object" }
  if (isObject(format) && format.type === "json_schema") {
    const { type: _type, ...schema } = format
    return { type: "json_schema", json_schema: schema }
  }
  return untranslatable("text.format", `"text.format" has no chat completion counterpart`)
}

/** Refused unless absent, null or the value that changes nothing. */
const noEffect: Readonly<Record<string, (v: unknown) => boolean>> = {
  truncation: (v) => v === "disabled",
  include: (v) => Array.isArray(v) && v.length === 0,
  reasoning: (v) => isObject(v) && (v.effort === undefined || v.effort === null) && (v.summary === undefined || v.summary === null),
  service_tier: (v) => v === "auto" || v === "default"
}

/**
 * The chat completion request for a Responses request. `outputCapField`: the name the upstream takes for the output
 * cap (OpenAI's own APIs `max_completion_tokens`, others `max_tokens`). A streamed call always asks for the usage
 * chunk: `response.completed` carries the usage.
 */
export const responsesRequestToOpenai = (
  body: Json,
  upstreamModel: string,
  options: { readonly outputCapField: "max_tokens" | "max_completion_tokens" }
): Json => {
  for (const key of Object.keys(body)) {
    if (!HANDLED.has(key) && !(SAME as ReadonlyArray<string>).includes(key)) {
      untranslatable(key, `"${key.slice(0, 64)}" has no chat completion counterpart`)
    }
    const harmless = noEffect[key]
    if (harmless !== undefined && body[key] !== undefined && body[key] !== null && !harmless(body[key])) {
      untranslatable(key, `"${key}" has no chat completion counterpart`)
    }
  }
  const messages: Array<Json> = []
  if (typeof body.instructions === "string" && body.instructions !== "") messages.push({ role: "system", content: body.instructions })
  if (typeof body.input === "string") {
    messages.push({ role: "user", content: body.input })
  } else {
    for (const [i, item] of (body.input as Array<Json>).entries()) {
      const path = `input[${i}]`
      const type = item.type ?? "message"
      switch (type) {
        case "message": {
          const role = item.role === "developer" ? "system" : item.role
          messages.push({ role, content: chatContent(item.content, `${path}.content`, role) })
          break
        }
        case "function_call": {
          const call = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } }
          // Calls of one turn join the assistant message before them (chat completions carries them there).
          const last = messages[messages.length - 1]
          if (last !== undefined && last.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call]
          else messages.push({ role: "assistant", content: null, tool_calls: [call] })
          break
        }
        case "function_call_output":
          messages.push({ role: "tool", tool_call_id: item.call_id, content: toolContent(item.output, `${path}.output`) })
          break
        case "reasoning":
          // The model's own earlier reasoning, opaque to any other provider: it asks nothing, so it is left out.
          break
        default:
          untranslatable(`${path}.type`, `input item type "${String(type).slice(0, 32)}" has no chat completion counterpart`)
      }
    }
  }
  const out: Json = { model: upstreamModel, messages }
  for (const key of SAME) if (body[key] !== undefined && body[key] !== null) out[key] = body[key]
  if (body.stream === true) out.stream_options = { include_usage: true }
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) out[options.outputCapField] = body.max_output_tokens
  const tools = chatTools(body.tools)
  if (tools !== undefined) out.tools = tools
  const toolChoice = chatToolChoice(body.tool_choice)
  if (toolChoice !== undefined) out.tool_choice = toolChoice
  const responseFormat = chatResponseFormat(body.text)
  if (responseFormat !== undefined) out.response_format = responseFormat
  const user = body.safety_identifier ?? body.user
  if (typeof user === "string") out.user = user
  return out
}

// ---------------------------------------------------------------------------------------------
// Answer
// ---------------------------------------------------------------------------------------------

/** Responses usage from chat usage. */
const responsesUsage = (usage: Json | undefined) => {
  const input = count(usage?.prompt_tokens)
  const output = count(usage?.completion_tokens)
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(usage?.prompt_tokens_details?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage?.completion_tokens_details?.reasoning_tokens) },
    total_tokens: input + output
  }
}

/** The response's status from the chat finish reason: cut by the cap or a filter is `incomplete`. */
const statusOf = (finish: unknown): { status: "completed" | "incomplete"; incomplete_details: Json | null } =>
  finish === "length"
    ? { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }
    : finish === "content_filter"
    ? { status: "incomplete", incomplete_details: { reason: "content_filter" } }
    : { status: "completed", incomplete_details: null }

const messageItem = (id: string, text: string, status: string) => ({
  id: `msg_${id}`,
  type: "message",
  status,
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }]
})

const functionCallItem = (callId: string, name: string, args: string, status: string) => ({
  id: `fc_${callId}`,
  type: "function_call",
  status,
  call_id: callId,
  name,
  arguments: args
})

/** The Response object around `output`, echoing the request's settings as OpenAI's does. */
const responseObject = (clientBody: Json, fields: { id: string; createdAt: number; model: string; status: string; incomplete: Json | null; output: Array<unknown>; usage: unknown }) => ({
  id: fields.id,
  object: "response",
  created_at: fields.createdAt,
  status: fields.status,
  background: false,
  error: null,
  incomplete_details: fields.incomplete,
  instructions: clientBody.instructions ?? null,
  max_output_tokens: clientBody.max_output_tokens ?? null,
  model: fields.model,
  output: fields.output,
  parallel_tool_calls: clientBody.parallel_tool_calls ?? true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: clientBody.temperature ?? 1,
  text: clientBody.text ?? { format: { type: "text" } },
  tool_choice: clientBody.tool_choice ?? "auto",
  tools: clientBody.tools ?? [],
  top_p: clientBody.top_p ?? 1,
  truncation: "disabled",
  usage: fields.usage,
  user: null,
  metadata: clientBody.metadata ?? {}
})

/** A whole chat completion as a Response. Throws `MalformedUpstream` for an answer that is not a chat completion. */
export const openaiResponseToResponses = (answer: unknown, clientBody: Json, nowSeconds: number): Json => {
  const choice = isObject(answer) && Array.isArray(answer.choices) ? answer.choices[0] : undefined
  if (!isObject(answer) || !isObject(choice) || !isObject(choice.message)) throw new MalformedUpstream("not a chat completion")
  const id = typeof answer.id === "string" ? answer.id : ""
  const message = choice.message
  const output: Array<unknown> = []
  if (typeof message.content === "string" && message.content !== "") output.push(messageItem(id, message.content, "completed"))
  if (typeof message.refusal === "string" && message.refusal !== "") {
    output.push({ id: `msg_${id}_refusal`, type: "message", status: "completed", role: "assistant", content: [{ type: "refusal", refusal: message.refusal }] })
  }
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || typeof call.id !== "string" || !isObject(call.function) || typeof call.function.name !== "string") {
      throw new MalformedUpstream("tool call without id or name")
    }
    output.push(functionCallItem(call.id, call.function.name, typeof call.function.arguments === "string" ? call.function.arguments : "", "completed"))
  }
  const { status, incomplete_details } = statusOf(choice.finish_reason)
  return responseObject(clientBody, {
    id,
    createdAt: typeof answer.created === "number" ? answer.created : nowSeconds,
    model: typeof answer.model === "string" ? answer.model : "",
    status,
    incomplete: incomplete_details,
    output,
    usage: responsesUsage(isObject(answer.usage) ? answer.usage : undefined)
  })
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

/**
 * Chat completion chunks rewritten as the Responses API's named events as they arrive: the first chunk opens the
 * response (`response.created`, `response.in_progress`), text deltas a message item and its output_text part,
 * each tool call a function_call item with its argument deltas; the finish reason closes the open items, and
 * `data: [DONE]` ends with `response.completed` (or `response.incomplete`) carrying the whole output and the usage
 * of the usage chunk. Every event has its `sequence_number`.
 */
export const openaiStreamToResponses = (options: { readonly clientBody: Json; readonly nowSeconds: number }): StreamTranslator => {
  const events = createSseEventReader()
  let sequence = 0
  let id = ""
  let model = ""
  let createdAt = options.nowSeconds
  let started = false
  let done = false
  let finish: unknown = null
  let usage: Json | undefined
  const output: Array<Json> = []
  /** The open message item (text), and the open function_call items by the chat tool call index. */
  let text: { index: number; id: string; text: string } | undefined
  const calls = new Map<number, { index: number; callId: string; name: string; args: string; open: boolean }>()

  const event = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`
  const response = (status: string, incomplete: Json | null, withUsage: boolean) =>
    responseObject(options.clientBody, { id, createdAt, model, status, incomplete, output: [...output], usage: withUsage ? responsesUsage(usage) : null })

  const closeText = (): string => {
    if (text === undefined) return ""
    const t = text
    text = undefined
    const item = messageItem(id, t.text, "completed")
    output[t.index] = item
    const part = item.content[0]!
    return event("response.output_text.done", { item_id: item.id, output_index: t.index, content_index: 0, text: t.text, logprobs: [] }) +
      event("response.content_part.done", { item_id: item.id, output_index: t.index, content_index: 0, part }) +
      event("response.output_item.done", { output_index: t.index, item })
  }
  const closeCalls = (): string => {
    let out = ""
    for (const call of calls.values()) {
      if (!call.open) continue
      call.open = false
      const item = functionCallItem(call.callId, call.name, call.args, "completed")
      output[call.index] = item
      out += event("response.function_call_arguments.done", { item_id: item.id, output_index: call.index, name: call.name, arguments: call.args }) +
        event("response.output_item.done", { output_index: call.index, item })
    }
    return out
  }

  const onChunk = (chunk: Json): string => {
    let out = ""
    if (!started) {
      started = true
      id = typeof chunk.id === "string" ? chunk.id : ""
      model = typeof chunk.model === "string" ? chunk.model : ""
      if (typeof chunk.created === "number") createdAt = chunk.created
      const opened = response("in_progress", null, false)
      out += event("response.created", { response: opened }) + event("response.in_progress", { response: opened })
    }
    if (isObject(chunk.usage)) usage = chunk.usage
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c: Json) => isObject(c) && (c.index ?? 0) === 0) : undefined
    if (!isObject(choice)) return out
    const delta = isObject(choice.delta) ? choice.delta : {}
    if (typeof delta.content === "string" && delta.content !== "") {
      if (text === undefined) {
        out += closeCalls()
        text = { index: output.length, id: `msg_${id}`, text: "" }
        const item = { id: text.id, type: "message", status: "in_progress", role: "assistant", content: [] }
        output.push(item)
        out += event("response.output_item.added", { output_index: text.index, item }) +
          event("response.content_part.added", { item_id: text.id, output_index: text.index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } })
      }
      text.text += delta.content
      out += event("response.output_text.delta", { item_id: text.id, output_index: text.index, content_index: 0, delta: delta.content, logprobs: [] })
    }
    for (const tc of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      if (!isObject(tc)) throw new MalformedUpstream("tool call delta is not an object")
      const key = typeof tc.index === "number" ? tc.index : 0
      let call = calls.get(key)
      if (call === undefined) {
        if (typeof tc.id !== "string" || !isObject(tc.function) || typeof tc.function.name !== "string") throw new MalformedUpstream("tool call without id or name")
        out += closeText()
        call = { index: output.length, callId: tc.id, name: tc.function.name, args: "", open: true }
        calls.set(key, call)
        const item = functionCallItem(call.callId, call.name, "", "in_progress")
        output.push(item)
        out += event("response.output_item.added", { output_index: call.index, item })
      }
      const args = isObject(tc.function) && typeof tc.function.arguments === "string" ? tc.function.arguments : ""
      if (args !== "") {
        call.args += args
        out += event("response.function_call_arguments.delta", { item_id: `fc_${call.callId}`, output_index: call.index, delta: args })
      }
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      finish = choice.finish_reason
      out += closeText() + closeCalls()
    }
    return out
  }

  const onDone = (): string => {
    done = true
    const { status, incomplete_details } = statusOf(finish)
    const closing = closeText() + closeCalls()
    const type = status === "completed" ? "response.completed" : "response.incomplete"
    return closing + event(type, { response: response(status, incomplete_details, true) })
  }

  const inChunk = chunkByChunk()
  return {
    push: (chunkText) =>
      inChunk((emit) => {
        for (const e of events.push(chunkText)) {
          if (done) break
          if (e.data === "[DONE]") {
            emit(onDone())
            continue
          }
          let data: Json
          try {
            data = JSON.parse(e.data)
          } catch {
            throw new MalformedUpstream("stream frame is not JSON")
          }
          if (isObject(data.error)) throw new MalformedUpstream("provider error event mid-stream")
          emit(onChunk(data))
        }
      }),
    complete: () => done
  }
}
