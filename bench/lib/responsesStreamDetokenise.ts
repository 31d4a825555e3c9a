/**
 * Streamed detokenisation of the Responses API, per event (issue 34's Speed item: <= 0.2 ms per event): the SDK's and
 * the proxy's SSE detokeniser (sdks/typescript/src/sseDetokeniser.ts) over a Responses stream shaped as the fake
 * provider and OpenAI send it (response.created ... 4-character output_text deltas, an alias cut across events ...
 * response.completed with the whole output), in-process, so only the detokeniser's own cost is measured.
 */
import { createSseDetokeniser } from "../../sdks/typescript/src/sseDetokeniser.ts"
import { tokeniseRequest } from "../../sdks/typescript/src/tokeniser/tokeniseRequest.ts"
import { median } from "./stats.ts"

/** Invented contact data: the stream's answer echoes it under its aliases. */
const PROMPT = "Write to maria.garcia@example.com and call +44 20 7946 0958 about invoice 4411, then copy jane.doe@example.org."

export interface ResponsesDetokeniseResult {
  /** Median over runs of (time to detokenise the whole stream) / events in it. */
  readonly perEventMs: number
  readonly events: number
}

/** The events of one streamed Responses answer whose text is `reply` (already tokenised), as SSE frames. */
export const responsesStreamFrames = (reply: string, pieceChars = 4): Array<string> => {
  let sequence = 0
  const frame = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`
  const item = (status: string, text: string) => ({
    id: "msg_1",
    type: "message",
    status,
    role: "assistant",
    content: status === "completed" ? [{ type: "output_text", text, annotations: [], logprobs: [] }] : []
  })
  const response = (status: string, output: Array<unknown>) => ({ id: "resp_1", object: "response", status, model: "local-chat", output, usage: null })
  const part = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] })
  const frames = [
    frame("response.created", { response: response("in_progress", []) }),
    frame("response.in_progress", { response: response("in_progress", []) }),
    frame("response.output_item.added", { output_index: 0, item: item("in_progress", "") }),
    frame("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: part("") })
  ]
  for (let i = 0; i < reply.length; i += pieceChars) {
    frames.push(frame("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: reply.slice(i, i + pieceChars), logprobs: [] }))
  }
  frames.push(
    frame("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text: reply, logprobs: [] }),
    frame("response.content_part.done", { item_id: "msg_1", output_index: 0, content_index: 0, part: part(reply) }),
    frame("response.output_item.done", { output_index: 0, item: item("completed", reply) }),
    frame("response.completed", { response: response("completed", [item("completed", reply)]) })
  )
  return frames
}

export const measureResponsesStreamDetokenise = async (runs = 200): Promise<ResponsesDetokeniseResult> => {
  const tokenised = await tokeniseRequest("responses", { model: "local-chat", stream: true, input: PROMPT }, { names: "off" })
  const reply = `Echo: ${(tokenised.body as { input: string }).input}`
  const frames = responsesStreamFrames(reply)
  const once = () => {
    const sse = createSseDetokeniser("responses", tokenised.map)
    let text = ""
    let events = 0
    const started = performance.now()
    for (const f of frames) {
      for (const e of sse.push(f)) {
        events++
        if ((e.json as { type?: string } | undefined)?.type === "response.output_text.delta") text += (e.json as { delta: string }).delta
      }
    }
    for (const e of sse.end()) {
      events++
      if ((e.json as { type?: string } | undefined)?.type === "response.output_text.delta") text += (e.json as { delta: string }).delta
    }
    const ms = performance.now() - started
    // A bench that did not restore would measure the wrong thing: refuse to report it.
    if (text !== `Echo: ${PROMPT}`) throw new Error(`the Responses stream was not detokenised: ${text}`)
    return { perEventMs: ms / events, events }
  }
  for (let i = 0; i < 50; i++) once()
  const results = Array.from({ length: runs }, once)
  return { perEventMs: median(results.map((r) => r.perEventMs)), events: results[0]!.events }
}
