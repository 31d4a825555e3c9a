/**
 * Anthropic Messages stream events rewritten as OpenAI `chat.completion.chunk` frames: message_start opens the
 * assistant turn, text deltas become content deltas, tool_use blocks become indexed tool-call deltas, message_delta
 * carries the finish reason, message_stop ends with a usage chunk (when the client asked for one) and
 * `data: [DONE]`. The text is copied, never read.
 */
import { anthropicPromptTokens } from "./responses.ts"
import { createSseEventReader } from "./sseEvents.ts"
import { anthropicStopToOpenaiFinish } from "./stopReasons.ts"
import { chunkByChunk, type StreamTranslator } from "./streamTranslator.ts"
import { MalformedUpstream } from "./translationError.ts"

type Json = Record<string, any>

export const anthropicStreamToOpenai = (options: { readonly includeUsage: boolean; readonly nowSeconds: number }): StreamTranslator => {
  const events = createSseEventReader()
  let id = ""
  let model = ""
  const toolIndex = new Map<number, number>()
  let prompt = 0
  let completion = 0
  let finish: string | null = null
  let done = false

  const chunk = (choices: Array<unknown>, extra: Json = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: options.nowSeconds, model, choices, ...extra })}\n\n`
  const delta = (d: Json, finishReason: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finishReason }])

  const onEvent = (data: Json): string => {
    switch (data.type) {
      case "message_start": {
        const m = data.message ?? {}
        id = typeof m.id === "string" ? m.id : ""
        model = typeof m.model === "string" ? m.model : ""
        if (m.usage) prompt = anthropicPromptTokens(m.usage)
        return delta({ role: "assistant", content: "" })
      }
      case "content_block_start": {
        const block = data.content_block ?? {}
        if (block.type !== "tool_use") return ""
        const index = toolIndex.size
        toolIndex.set(data.index, index)
        return delta({ tool_calls: [{ index, id: block.id, type: "function", function: { name: block.name, arguments: "" } }] })
      }
      case "content_block_delta": {
        const d = data.delta ?? {}
        if (d.type === "text_delta") return delta({ content: d.text })
        if (d.type === "input_json_delta") {
          const index = toolIndex.get(data.index)
          if (index === undefined) throw new MalformedUpstream("input_json_delta outside a tool_use block")
          return delta({ tool_calls: [{ index, function: { arguments: d.partial_json } }] })
        }
        return ""
      }
      case "message_delta": {
        if (data.usage) {
          if (typeof data.usage.output_tokens === "number") completion = data.usage.output_tokens
          if (typeof data.usage.input_tokens === "number") prompt = anthropicPromptTokens(data.usage)
        }
        finish = anthropicStopToOpenaiFinish(data.delta?.stop_reason)
        return delta({}, finish)
      }
      case "message_stop": {
        done = true
        const usage = options.includeUsage
          ? chunk([], { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })
          : ""
        return `${finish === null ? delta({}, "stop") : ""}${usage}data: [DONE]\n\n`
      }
      case "error":
        // The provider gave up mid-answer: end without the terminator, like a cut stream.
        throw new MalformedUpstream("provider error event mid-stream")
      default:
        // ping, content_block_stop: nothing to say in the other format
        return ""
    }
  }

  const inChunk = chunkByChunk()
  return {
    push: (text) =>
      inChunk((emit) => {
        for (const event of events.push(text)) {
          if (done) break
          let data: Json
          try {
            data = JSON.parse(event.data)
          } catch {
            throw new MalformedUpstream("stream frame is not JSON")
          }
          emit(onEvent(data))
        }
      }),
    complete: () => done
  }
}
