/**
 * Restores originals in a streamed answer (SSE) as it arrives, frame by frame, for OpenAI chat completion chunks and
 * Anthropic message events. Each text field that streams (a choice's `delta.content`, a tool call's arguments, an
 * Anthropic block's `text_delta` / `input_json_delta`) has its own streaming detokeniser, so an alias cut across two
 * chunks is restored whole, and nothing is held back longer than a proper prefix of an alias. Text held back when
 * a field ends (finish_reason, content_block_stop, [DONE]) is released in that frame (or a frame just before it).
 * The `event: receipt-v2` trailer passes through unchanged and is also handed to the caller.
 *
 * OpenAI Responses events: every `*.delta` event's `delta` (output text, function call arguments, refusals, reasoning
 * summaries, ...) streams through its own detokeniser, keyed by its event type and item; its `*.done` event releases
 * what was held back as one more `*.delta` event just before it (sequence numbers after it shift by one, so they stay
 * strictly increasing) and carries its whole value restored. Every other event (`response.created`,
 * `response.output_item.done`, `response.completed` with the whole output, and event types this code does not
 * know) is whole in one frame: each string in it is restored as it is, `arguments` JSON texts with escaped originals.
 */
import { detokeniseJsonValue, jsonEscapedMap } from "./tokeniser/detokeniseJsonValue.ts"
import { createStreamingDetokeniser, type StreamingDetokeniser } from "./tokeniser/streamingDetokeniser.ts"
import type { AliasMap } from "./tokeniser/types.ts"
import { StreamError } from "./errors.ts"

export type StreamRoute = "chat.completions" | "messages" | "responses"

/** One SSE event as the gateway sent it, after detokenisation. `data` is the raw data text. */
export interface SseEvent {
  readonly event: string | undefined
  readonly data: string
  /** The parsed JSON of `data`, when it is JSON. */
  readonly json: unknown
}

export interface SseDetokeniser {
  /** Feeds gateway text; returns the complete events it finished, detokenised. */
  readonly push: (text: string) => ReadonlyArray<SseEvent>
  /** The input ended: returns the last events (held-back text released); throws StreamError on a torn frame. */
  readonly end: () => ReadonlyArray<SseEvent>
  /** The `receipt-v2` trailer's envelope, once seen. */
  readonly receipt: () => unknown
  /** True once the stream's own end marker was seen (`[DONE]`, `message_stop`, or a Responses terminal event). */
  readonly completed: () => boolean
}

const isRecord = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v)

/** The events that end a Responses stream. */
const RESPONSES_TERMINAL: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed"])

export const serialiseEvent = (e: SseEvent): string => `${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${e.data}\n\n`

export const createSseDetokeniser = (route: StreamRoute, map: AliasMap): SseDetokeniser => {
  const escaped = jsonEscapedMap(map)
  const fields = new Map<string, StreamingDetokeniser>()
  const field = (key: string, json: boolean) => {
    let d = fields.get(key)
    if (d === undefined) fields.set(key, d = createStreamingDetokeniser(json ? escaped : map))
    return d
  }
  const release = (key: string) => {
    const d = fields.get(key)
    if (d === undefined) return ""
    fields.delete(key)
    return d.flush()
  }
  let buffer = ""
  let receipt: unknown
  let completed = false
  let lastChunkId: unknown
  let lastModel: unknown

  const event = (name: string | undefined, json: unknown): SseEvent => ({ event: name, data: JSON.stringify(json), json })

  /** Releases every field still holding text, as one chunk (chat) before the end marker. */
  const releaseAllChat = (): Array<SseEvent> => {
    const choices: Array<Record<string, unknown>> = []
    for (const key of [...fields.keys()]) {
      const text = release(key)
      if (text === "") continue
      const [, kind, index, tool] = /^(c|t)(\d+)(?:\.(\d+))?$/.exec(key) ?? []
      const delta = kind === "c" ? { content: text } : { tool_calls: [{ index: Number(tool), function: { arguments: text } }] }
      choices.push({ index: Number(index), delta, finish_reason: null })
    }
    return choices.length === 0 ? [] : [event(undefined, { id: lastChunkId, object: "chat.completion.chunk", model: lastModel, choices })]
  }

  const chatFrame = (chunk: Record<string, any>): Array<SseEvent> => {
    lastChunkId = chunk.id ?? lastChunkId
    lastModel = chunk.model ?? lastModel
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isRecord(choice)) continue
      const i = choice.index ?? 0
      const delta = isRecord(choice.delta) ? choice.delta : undefined
      if (delta !== undefined && typeof delta.content === "string") delta.content = field(`c${i}`, false).push(delta.content)
      for (const call of Array.isArray(delta?.tool_calls) ? delta!.tool_calls : []) {
        if (isRecord(call) && isRecord(call.function) && typeof call.function.arguments === "string") {
          call.function.arguments = field(`t${i}.${call.index ?? 0}`, true).push(call.function.arguments)
        }
      }
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        const rest = release(`c${i}`)
        if (rest !== "") choice.delta = { ...(delta ?? {}), content: `${typeof delta?.content === "string" ? delta.content : ""}${rest}` }
        for (const key of [...fields.keys()].filter((k) => k.startsWith(`t${i}.`))) {
          const args = release(key)
          if (args === "") continue
          const calls = Array.isArray(choice.delta?.tool_calls) ? choice.delta.tool_calls : []
          choice.delta = { ...(choice.delta ?? {}), tool_calls: [...calls, { index: Number(key.split(".")[1]), function: { arguments: args } }] }
        }
      }
      // Non-streamed-shaped content (some providers send `message`) is restored whole.
      if (isRecord(choice.message) && typeof choice.message.content === "string") choice.message.content = field(`m${i}`, false).push(choice.message.content) + release(`m${i}`)
    }
    return [event(undefined, chunk)]
  }

  const messagesFrame = (name: string | undefined, json: Record<string, any>): Array<SseEvent> => {
    const index = json.index ?? 0
    if (json.type === "content_block_delta" && isRecord(json.delta)) {
      if (json.delta.type === "text_delta" && typeof json.delta.text === "string") json.delta.text = field(`b${index}`, false).push(json.delta.text)
      if (json.delta.type === "input_json_delta" && typeof json.delta.partial_json === "string") {
        json.delta.partial_json = field(`j${index}`, true).push(json.delta.partial_json)
      }
      return [event(name, json)]
    }
    if (json.type === "content_block_stop") {
      const out: Array<SseEvent> = []
      const text = release(`b${index}`)
      if (text !== "") out.push(event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } }))
      const partial = release(`j${index}`)
      if (partial !== "") out.push(event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } }))
      return [...out, event(name, json)]
    }
    if (json.type === "message_stop") completed = true
    return [event(name, json)]
  }

  /** Responses: synthetic events inserted so far; every later sequence_number moves up by as many. */
  let shift = 0
  const renumbered = (json: Record<string, any>): Record<string, any> =>
    typeof json.sequence_number === "number" ? { ...json, sequence_number: json.sequence_number + shift } : json
  /** One streaming field per delta type and the ids that say which text it belongs to. */
  const responsesKey = (deltaType: string, json: Record<string, any>) =>
    `r|${deltaType}|${json.item_id ?? ""}|${json.output_index ?? ""}|${json.content_index ?? ""}|${json.summary_index ?? ""}`
  /** Held-back text of one Responses field as a delta event of its own, placed before an event numbered `next`. */
  const responsesRelease = (key: string, next: number | undefined): Array<SseEvent> => {
    const rest = release(key)
    if (rest === "") return []
    const [, deltaType, itemId, outputIndex, contentIndex, summaryIndex] = key.split("|")
    const ids: Record<string, unknown> = {}
    if (itemId !== "") ids.item_id = itemId
    if (outputIndex !== "") ids.output_index = Number(outputIndex)
    if (contentIndex !== "") ids.content_index = Number(contentIndex)
    if (summaryIndex !== "") ids.summary_index = Number(summaryIndex)
    const synthetic: Record<string, unknown> = { type: deltaType, ...(next === undefined ? {} : { sequence_number: next + shift }), ...ids, delta: rest }
    if (next !== undefined) shift++
    return [event(deltaType, synthetic)]
  }

  const responsesFrame = (name: string | undefined, json: Record<string, any>): Array<SseEvent> => {
    const type = typeof json.type === "string" ? json.type : name ?? ""
    if (type.endsWith(".delta") && typeof json.delta === "string") {
      const out = renumbered(json)
      out.delta = field(responsesKey(type, json), type.includes("arguments")).push(json.delta)
      return [event(name, out)]
    }
    const before: Array<SseEvent> = []
    if (type.endsWith(".done")) {
      before.push(...responsesRelease(responsesKey(`${type.slice(0, -".done".length)}.delta`, json), json.sequence_number))
    }
    if (RESPONSES_TERMINAL.has(type)) {
      // Whatever a provider left open without its .done event is released before the end.
      for (const key of [...fields.keys()]) before.push(...responsesRelease(key, json.sequence_number))
      completed = true
    }
    return [...before, event(name, detokeniseJsonValue(renumbered(json), map, escaped))]
  }

  const handle = (raw: string): Array<SseEvent> => {
    let name: string | undefined
    const data: Array<string> = []
    const other: Array<string> = []
    for (const line of raw.split(/\r?\n/)) {
      if (line.startsWith("event:")) name = line.slice(6).trim()
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""))
      else if (line !== "") other.push(line)
    }
    if (data.length === 0) return []
    const text = data.join("\n")
    if (name === "receipt-v2") {
      try {
        receipt = JSON.parse(text)
      } catch {
        throw new StreamError({ status: 200, code: "stream_error", message: "The receipt-v2 trailer is not JSON." })
      }
      return [{ event: name, data: text, json: receipt }]
    }
    if (text === "[DONE]") {
      completed = true
      return [...(route === "chat.completions" ? releaseAllChat() : []), { event: name, data: text, json: undefined }]
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new StreamError({ status: 200, code: "stream_error", message: "The gateway sent a stream frame that is not JSON." })
    }
    if (!isRecord(json)) return [{ event: name, data: text, json }]
    if (name === "error" || json.type === "error") return [{ event: name, data: text, json }]
    return route === "chat.completions" ? chatFrame(json) : route === "responses" ? responsesFrame(name, json) : messagesFrame(name, json)
  }

  return {
    push: (text) => {
      buffer += text
      const out: Array<SseEvent> = []
      for (;;) {
        const match = /\r?\n\r?\n/.exec(buffer)
        if (match === null) break
        const raw = buffer.slice(0, match.index)
        buffer = buffer.slice(match.index + match[0].length)
        out.push(...handle(raw))
      }
      return out
    },
    end: () => {
      if (buffer.trim() !== "") {
        buffer = ""
        throw new StreamError({ status: 200, code: "stream_error", message: "The stream ended in the middle of a frame." })
      }
      if (route === "chat.completions") return releaseAllChat()
      if (route === "responses") return [...fields.keys()].flatMap((key) => responsesRelease(key, undefined))
      return [...fields.keys()].flatMap((key) => {
        const text = release(key)
        const index = Number(key.slice(1))
        if (text === "") return []
        const delta = key.startsWith("b") ? { type: "text_delta", text } : { type: "input_json_delta", partial_json: text }
        return [event("content_block_delta", { type: "content_block_delta", index, delta })]
      })
    },
    receipt: () => receipt,
    completed: () => completed
  }
}
