/**
 * Whole (non-streamed) answers rewritten into the client's format, structurally: content blocks to a message
 * with tool calls and back, stop reasons and usage renamed. The text inside is copied, never read. An answer that
 * is not the shape its format promises throws `MalformedUpstream`.
 */
import { anthropicStopToOpenaiFinish, openaiFinishToAnthropicStop } from "./stopReasons.ts"
import { MalformedUpstream } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)
const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0)

/** Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI's prompt_tokens includes them. */
export const anthropicPromptTokens = (usage: Json): number =>
  count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens)

export const anthropicResponseToOpenai = (answer: unknown, nowSeconds: number): Json => {
  if (!isObject(answer) || !Array.isArray(answer.content)) throw new MalformedUpstream("not an Anthropic message")
  let text = ""
  let sawText = false
  const toolCalls: Array<Json> = []
  for (const block of answer.content) {
    if (!isObject(block)) throw new MalformedUpstream("content block is not an object")
    if (block.type === "text" && typeof block.text === "string") {
      text += block.text
      sawText = true
    } else if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } })
    }
    // thinking blocks have no place in a chat completion message
  }
  const usage = isObject(answer.usage) ? answer.usage : {}
  const prompt = anthropicPromptTokens(usage)
  const completion = count(usage.output_tokens)
  return {
    id: typeof answer.id === "string" ? answer.id : "",
    object: "chat.completion",
    created: nowSeconds,
    model: typeof answer.model === "string" ? answer.model : "",
    choices: [{
      index: 0,
      message: { role: "assistant", content: sawText || toolCalls.length === 0 ? text : null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}), refusal: null },
      logprobs: null,
      finish_reason: anthropicStopToOpenaiFinish(answer.stop_reason)
    }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  }
}

const parseArguments = (args: unknown): unknown => {
  if (typeof args !== "string" || args === "") return {}
  try {
    return JSON.parse(args)
  } catch {
    throw new MalformedUpstream("tool call arguments are not JSON")
  }
}

export const openaiResponseToAnthropic = (answer: unknown): Json => {
  const choice = isObject(answer) && Array.isArray(answer.choices) ? answer.choices[0] : undefined
  if (!isObject(answer) || !isObject(choice) || !isObject(choice.message)) throw new MalformedUpstream("not a chat completion")
  const message = choice.message
  const content: Array<Json> = []
  if (typeof message.content === "string" && message.content !== "") content.push({ type: "text", text: message.content })
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isObject(call) || typeof call.id !== "string" || !isObject(call.function) || typeof call.function.name !== "string") {
        throw new MalformedUpstream("tool call without id or name")
      }
      content.push({ type: "tool_use", id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) })
    }
  }
  const usage = isObject(answer.usage) ? answer.usage : {}
  return {
    id: typeof answer.id === "string" ? answer.id : "",
    type: "message",
    role: "assistant",
    model: typeof answer.model === "string" ? answer.model : "",
    content,
    stop_reason: openaiFinishToAnthropicStop(choice.finish_reason),
    stop_sequence: null,
    usage: { input_tokens: count(usage.prompt_tokens), output_tokens: count(usage.completion_tokens) }
  }
}
