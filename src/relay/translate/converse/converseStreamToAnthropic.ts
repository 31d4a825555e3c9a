/**
 * ConverseStream events rewritten as Anthropic Messages stream events as they arrive: messageStart opens the
 * message, a text delta opens (once) a text block (Converse sends no start event for text), a toolUse start opens
 * a tool_use block fed with input_json deltas, contentBlockStop closes the block, and the closing `metadata`
 * event (which follows messageStop and carries the usage) ends with message_delta and message_stop. An exception
 * message (throttling, a model error mid-answer) or a frame that is not an event of this shape throws
 * `MalformedUpstream`. The text is copied, never read.
 *
 * Events: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html and
 * API_runtime_ConverseStreamOutput, API_runtime_ContentBlockDeltaEvent, API_runtime_ConverseStreamMetadataEvent.
 */
import type { UpstreamUsage } from "../../usage.ts"
import { MalformedUpstream } from "../translationError.ts"
import { converseStopToAnthropicStop } from "./converseStopReasons.ts"
import { converseUsageToAnthropic } from "./converseResponseToAnthropic.ts"
import type { EventStreamMessage } from "./eventStreamReader.ts"

type Json = Record<string, any>

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
const decoder = new TextDecoder("utf-8", { fatal: true })

export interface ConverseStreamToAnthropic {
  /** One decoded event-stream message in, Anthropic SSE text out (possibly empty). */
  push(message: EventStreamMessage): string
  /** True once `metadata` (the last event of a whole answer) arrived and message_stop was written. */
  complete(): boolean
  /**
   * What the gateway meters: Converse's own token counts (from the closing `metadata` event). A stream that ended
   * before it has no counts: its output is estimated from what the client was given (4 characters a token, the
   * relay's rule), never from the event-stream bytes, whose framing and padding the client never saw.
   */
  usage(): UpstreamUsage
}

export const converseStreamToAnthropic = (meta: { readonly id: string; readonly model: string }): ConverseStreamToAnthropic => {
  let started = false
  let done = false
  let stop: string | null = null
  /** Converse content block index -> the client's block index; the open one, if any. */
  const blocks = new Map<number, number>()
  let open: number | undefined
  let next = 0
  const usage: UpstreamUsage = { responseId: meta.id, inputTokens: undefined, outputTokens: undefined }
  /** Characters of text and tool input passed on to the client. */
  let delivered = 0

  const start = () => {
    if (started) return ""
    started = true
    return event("message_start", {
      type: "message_start",
      message: {
        id: meta.id,
        type: "message",
        role: "assistant",
        model: meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 }
      }
    })
  }
  const close = () => {
    if (open === undefined) return ""
    const out = event("content_block_stop", { type: "content_block_stop", index: open })
    open = undefined
    return out
  }
  const openBlock = (converseIndex: number, contentBlock: Json) => {
    let out = close()
    const index = next++
    blocks.set(converseIndex, index)
    open = index
    out += event("content_block_start", { type: "content_block_start", index, content_block: contentBlock })
    return out
  }

  const onEvent = (type: string, data: Json): string => {
    switch (type) {
      case "messageStart":
        return start()
      case "contentBlockStart": {
        const toolUse = data.start?.toolUse
        if (toolUse === undefined) return ""
        if (typeof toolUse.toolUseId !== "string" || typeof toolUse.name !== "string") throw new MalformedUpstream("toolUse starts without id or name")
        return start() + openBlock(Number(data.contentBlockIndex), { type: "tool_use", id: toolUse.toolUseId, name: toolUse.name, input: {} })
      }
      case "contentBlockDelta": {
        const index = Number(data.contentBlockIndex)
        const delta = data.delta ?? {}
        let out = start()
        if (typeof delta.text === "string") {
          if (blocks.get(index) === undefined || open !== blocks.get(index)) out += openBlock(index, { type: "text", text: "" })
          delivered += delta.text.length
          return out + event("content_block_delta", { type: "content_block_delta", index: open, delta: { type: "text_delta", text: delta.text } })
        }
        if (delta.toolUse !== undefined) {
          if (open === undefined || open !== blocks.get(index)) throw new MalformedUpstream("toolUse delta outside a toolUse block")
          if (typeof delta.toolUse.input !== "string") throw new MalformedUpstream("toolUse delta without input")
          delivered += delta.toolUse.input.length
          return out + event("content_block_delta", { type: "content_block_delta", index: open, delta: { type: "input_json_delta", partial_json: delta.toolUse.input } })
        }
        // reasoningContent, citations: nothing the client asked for in a form it can take
        return out
      }
      case "contentBlockStop":
        return open !== undefined && open === blocks.get(Number(data.contentBlockIndex)) ? close() : ""
      case "messageStop":
        stop = converseStopToAnthropicStop(data.stopReason)
        return start() + close()
      case "metadata": {
        const u = converseUsageToAnthropic(data.usage)
        // Metered like Anthropic's own answers: input_tokens without the cached prompt tokens counted apart.
        usage.inputTokens = u.input_tokens as number
        usage.outputTokens = u.output_tokens as number
        if (stop === null) throw new MalformedUpstream("metadata before messageStop")
        done = true
        return event("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: u }) +
          event("message_stop", { type: "message_stop" })
      }
      default:
        // An event type added later: nothing the client's format knows of.
        return ""
    }
  }

  return {
    push: (message) => {
      if (done) return ""
      if (message.messageType !== "event") throw new MalformedUpstream(`provider ${message.messageType} mid-stream`)
      let data: unknown
      try {
        data = JSON.parse(decoder.decode(message.payload))
      } catch {
        throw new MalformedUpstream("event payload is not JSON")
      }
      if (typeof data !== "object" || data === null || Array.isArray(data)) throw new MalformedUpstream("event payload is not an object")
      return onEvent(message.type, data as Json)
    },
    complete: () => done,
    usage: () => done ? usage : { ...usage, outputTokens: Math.ceil(delivered / 4) }
  }
}
