// What the gateway meters from an upstream SSE stream: the response id and usage, read without reading content.
import { describe, expect, it } from "vitest"
import { createSseUsageReader } from "../../../src/relay/usage.ts"

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const response = (status: string, usage: unknown) => ({ id: "resp_1", object: "response", status, output: [], usage })

/** A Responses stream as OpenAI sends it; `end` is its terminal event (or none: a stream cut before it). */
const responsesStream = (end: "response.completed" | "response.incomplete" | "response.failed" | undefined, delta = "Hello") =>
  [
    event("response.created", { response: response("in_progress", null) }),
    event("response.in_progress", { response: response("in_progress", null) }),
    event("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta }),
    ...(end === undefined ? [] : [event(end, { response: response(end.slice("response.".length), { input_tokens: 12, output_tokens: 5, total_tokens: 17 }) })])
  ].join("")

/** Feeds `text` in pieces of `size` characters, so events and lines are cut anywhere. */
const feed = (text: string, size: number) => {
  const reader = createSseUsageReader()
  for (let i = 0; i < text.length; i += size) reader.push(text.slice(i, i + size))
  return reader
}

describe("createSseUsageReader", () => {
  it("reads a Responses stream's id from response.created and its usage from response.completed, however it is cut", () => {
    for (const size of [1, 7, 64, 100_000]) {
      const reader = feed(responsesStream("response.completed"), size)
      expect(reader.usage()).toEqual({ responseId: "resp_1", inputTokens: 12, outputTokens: 5 })
      expect(reader.responseEnded()).toBe(true)
    }
  })

  it("ends a Responses stream on response.incomplete and response.failed too, with their usage", () => {
    for (const end of ["response.incomplete", "response.failed"] as const) {
      const reader = feed(responsesStream(end), 13)
      expect(reader.responseEnded()).toBe(true)
      expect(reader.usage()).toEqual({ responseId: "resp_1", inputTokens: 12, outputTokens: 5 })
    }
  })

  it("does not end a stream cut before its terminal event, even when the text names one", () => {
    // The delta's text holds `response.completed"` as a JSON string holds it: escaped.
    const reader = feed(responsesStream(undefined, "see \"response.completed\" and usage"), 9)
    expect(reader.responseEnded()).toBe(false)
    expect(reader.usage()).toEqual({ responseId: "resp_1", inputTokens: undefined, outputTokens: undefined })
  })

  it("reads a chat completion stream's id and its final usage chunk", () => {
    const chunk = (extra: Record<string, unknown>) => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", ...extra })}\n\n`
    const text = chunk({ choices: [{ delta: { content: "Hi" } }] }) + chunk({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2 } }) + "data: [DONE]\n\n"
    const reader = feed(text, 5)
    expect(reader.usage()).toEqual({ responseId: "chatcmpl-1", inputTokens: 9, outputTokens: 2 })
    expect(reader.sawDone()).toBe(true)
    expect(reader.responseEnded()).toBe(false)
  })

  it("reads an Anthropic stream's id and input from message_start and its output from message_delta", () => {
    const text = event("message_start", { message: { id: "msg_1", usage: { input_tokens: 20, output_tokens: 1 } } }) +
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi" } }) +
      event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 6 } })
    const reader = feed(text, 11)
    expect(reader.usage()).toEqual({ responseId: "msg_1", inputTokens: 20, outputTokens: 6 })
  })
})
