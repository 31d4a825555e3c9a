/**
 * OpenAI `chat.completion.chunk` frames rewritten as Anthropic Messages stream events: the first chunk opens the
 * message, content deltas open (once) a text block, each tool call opens a tool_use block fed with input_json
 * deltas, and `data: [DONE]` closes the open block and ends with message_delta (stop reason and usage, which
 * OpenAI sends after the finish reason) and message_stop. The text is copied, never read.
 */
import { createSseEventReader } from "./sseEvents.ts"
import { openaiFinishToAnthropicStop } from "./stopReasons.ts"
import { chunkByChunk, type StreamTranslator } from "./streamTranslator.ts"
import { MalformedUpstream } from "./translationError.ts"

type Json = Record<string, any>

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

export const openaiStreamToAnthropic = (): StreamTranslator => {
  const events = createSseEventReader()
  let started = false
  /** The open content block: its index, and which tool call it is (undefined for text). */
  let open: { readonly index: number; readonly tool: number | undefined } | undefined
  let nextBlock = 0
  let stop: string | null = null
  let inputTokens = 0
  let outputTokens = 0
  let done = false

  const close = () => {
    if (open === undefined) return ""
    const out = event("content_block_stop", { type: "content_block_stop", index: open.index })
    open = undefined
    return out
  }
  const start = (chunk: Json) => {
    if (started) return ""
    started = true
    return event("message_start", {
      type: "message_start",
      message: {
        id: typeof chunk.id === "string" ? chunk.id : "",
        type: "message",
        role: "assistant",
        model: typeof chunk.model === "string" ? chunk.model : "",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 }
      }
    })
  }

  const onChunk = (chunk: Json): string => {
    let out = start(chunk)
    if (chunk.usage && typeof chunk.usage === "object") {
      if (typeof chunk.usage.prompt_tokens === "number") inputTokens = chunk.usage.prompt_tokens
      if (typeof chunk.usage.completion_tokens === "number") outputTokens = chunk.usage.completion_tokens
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined
    if (choice === undefined) return out
    const delta = choice.delta ?? {}
    if (typeof delta.content === "string" && delta.content !== "") {
      if (open === undefined || open.tool !== undefined) {
        out += close()
        open = { index: nextBlock++, tool: undefined }
        out += event("content_block_start", { type: "content_block_start", index: open.index, content_block: { type: "text", text: "" } })
      }
      out += event("content_block_delta", { type: "content_block_delta", index: open.index, delta: { type: "text_delta", text: delta.content } })
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        const tool = typeof call.index === "number" ? call.index : 0
        if (open === undefined || open.tool !== tool) {
          if (typeof call.id !== "string" || typeof call.function?.name !== "string") throw new MalformedUpstream("tool call starts without id or name")
          out += close()
          open = { index: nextBlock++, tool }
          out += event("content_block_start", {
            type: "content_block_start",
            index: open.index,
            content_block: { type: "tool_use", id: call.id, name: call.function.name, input: {} }
          })
        }
        const args = call.function?.arguments
        if (typeof args === "string" && args !== "") {
          out += event("content_block_delta", { type: "content_block_delta", index: open.index, delta: { type: "input_json_delta", partial_json: args } })
        }
      }
    }
    if (typeof choice.finish_reason === "string") {
      stop = openaiFinishToAnthropicStop(choice.finish_reason)
      out += close()
    }
    return out
  }

  const finish = () => {
    done = true
    return close() +
      event("message_delta", {
        type: "message_delta",
        delta: { stop_reason: stop ?? "end_turn", stop_sequence: null },
        usage: { input_tokens: inputTokens, output_tokens: outputTokens }
      }) +
      event("message_stop", { type: "message_stop" })
  }

  const inChunk = chunkByChunk()
  return {
    push: (text) =>
      inChunk((emit) => {
        for (const e of events.push(text)) {
          if (done) break
          if (e.data === "[DONE]") {
            if (!started) throw new MalformedUpstream("stream ended before any chunk")
            emit(finish())
            continue
          }
          let chunk: Json
          try {
            chunk = JSON.parse(e.data)
          } catch {
            throw new MalformedUpstream("stream frame is not JSON")
          }
          if (chunk.error !== undefined) throw new MalformedUpstream("provider error frame mid-stream")
          emit(onChunk(chunk))
        }
      }),
    complete: () => done
  }
}
