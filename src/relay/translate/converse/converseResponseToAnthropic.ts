/**
 * A whole Converse answer rewritten as an Anthropic Messages answer, structurally: `output.message.content` blocks
 * (`text`, `toolUse`) become `text` and `tool_use` blocks, `stopReason` a stop reason, `usage` (input, output and
 * cache counts) the Messages usage. The text is copied, never read. Reasoning blocks are left out (the client did
 * not ask for thinking in a format that could carry it). An answer not of Converse's shape throws
 * `MalformedUpstream`.
 *
 * Shape: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html (response),
 * API_runtime_TokenUsage.
 */
import { MalformedUpstream } from "../translationError.ts"
import { converseStopToAnthropicStop } from "./converseStopReasons.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)
const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0)

/** Converse TokenUsage as the Messages API's usage (cache reads and writes counted apart, as Anthropic does). */
export const converseUsageToAnthropic = (usage: unknown): Json => {
  const u = isObject(usage) ? usage : {}
  return {
    input_tokens: count(u.inputTokens),
    output_tokens: count(u.outputTokens),
    ...(u.cacheReadInputTokens !== undefined ? { cache_read_input_tokens: count(u.cacheReadInputTokens) } : {}),
    ...(u.cacheWriteInputTokens !== undefined ? { cache_creation_input_tokens: count(u.cacheWriteInputTokens) } : {})
  }
}

export const converseResponseToAnthropic = (answer: unknown, meta: { readonly id: string; readonly model: string }): Json => {
  const message = isObject(answer) && isObject(answer.output) ? answer.output.message : undefined
  if (!isObject(answer) || !isObject(message) || !Array.isArray(message.content)) throw new MalformedUpstream("not a Converse answer")
  const content: Array<Json> = []
  for (const block of message.content) {
    if (!isObject(block)) throw new MalformedUpstream("content block is not an object")
    if (typeof block.text === "string") content.push({ type: "text", text: block.text })
    else if (isObject(block.toolUse)) {
      const use = block.toolUse
      if (typeof use.toolUseId !== "string" || typeof use.name !== "string") throw new MalformedUpstream("toolUse without id or name")
      content.push({ type: "tool_use", id: use.toolUseId, name: use.name, input: use.input ?? {} })
    }
    // reasoningContent, citations and other blocks have no place in the client's answer
  }
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content,
    stop_reason: converseStopToAnthropicStop(answer.stopReason),
    stop_sequence: null,
    usage: converseUsageToAnthropic(answer.usage)
  }
}
