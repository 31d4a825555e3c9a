import { describe, expect, it } from "vitest"
import { anthropicStreamToOpenai } from "../../../../src/relay/translate/anthropicStreamToOpenai.ts"
import { openaiStreamToAnthropic } from "../../../../src/relay/translate/openaiStreamToAnthropic.ts"
import type { StreamTranslator } from "../../../../src/relay/translate/streamTranslator.ts"
import { MalformedUpstream } from "../../../../src/relay/translate/translationError.ts"

const anthropicEvent = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`
const ANTHROPIC_STREAM = [
  { type: "message_start", message: { id: "msg_1", model: "claude-x", usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 } } },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "ping" },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hé <PERSON_1>" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "lookup", input: {} } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"q\":" } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "\"x\"}" } },
  { type: "content_block_stop", index: 1 },
  { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 7 } },
  { type: "message_stop" }
].map(anthropicEvent).join("")

const openaiChunk = (data: Record<string, unknown>) => `data: ${JSON.stringify({ id: "chatcmpl-1", model: "gpt-x", ...data })}\n\n`
const OPENAI_STREAM = [
  openaiChunk({ choices: [{ index: 0, delta: { role: "assistant", content: "Hé " } }] }),
  openaiChunk({ choices: [{ index: 0, delta: { content: "<EMAIL_1>" } }] }),
  openaiChunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "a", arguments: "{\"k\":" } }] } }] }),
  openaiChunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "1}" } }] } }] }),
  openaiChunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "b", arguments: "{}" } }] } }] }),
  openaiChunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }),
  openaiChunk({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 9 } }),
  "data: [DONE]\n\n"
].join("")

/** Feeds the stream in pieces of `size` characters (frames and JSON cut anywhere). */
const feed = (make: () => StreamTranslator, text: string, size: number) => {
  const t = make()
  let out = ""
  for (let i = 0; i < text.length; i += size) out += t.push(text.slice(i, i + size))
  return { out, complete: t.complete() }
}
const dataFrames = (sse: string) => sse.split("\n\n").filter((f) => f.includes("data: {")).map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)))

describe("anthropicStreamToOpenai", () => {
  const make = () => anthropicStreamToOpenai({ includeUsage: true, nowSeconds: 1_700_000_000 })

  it("maps text, tool_use and the stop reason to chunks, ends with the usage chunk and [DONE]", () => {
    const { out, complete } = feed(make, ANTHROPIC_STREAM, ANTHROPIC_STREAM.length)
    expect(complete).toBe(true)
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true)
    const frames = dataFrames(out)
    expect(frames.every((f) => f.object === "chat.completion.chunk" && f.id === "msg_1" && f.model === "claude-x")).toBe(true)
    expect(frames.map((f) => f.choices[0]?.delta?.content ?? "").join("")).toBe("Hé <PERSON_1>")
    const toolDeltas = frames.flatMap((f) => f.choices[0]?.delta?.tool_calls ?? [])
    expect(toolDeltas[0]).toEqual({ index: 0, id: "toolu_1", type: "function", function: { name: "lookup", arguments: "" } })
    expect(toolDeltas.map((d: any) => d.function.arguments).join("")).toBe("{\"q\":\"x\"}")
    expect(frames.at(-2).choices[0].finish_reason).toBe("tool_calls")
    // Cached prompt tokens count as prompt tokens in OpenAI's usage.
    expect(frames.at(-1).usage).toEqual({ prompt_tokens: 15, completion_tokens: 7, total_tokens: 22 })
  })

  it("gives the same frames however the upstream bytes were cut", () => {
    const whole = feed(make, ANTHROPIC_STREAM, ANTHROPIC_STREAM.length).out
    for (const size of [1, 2, 3, 7, 64]) expect(feed(make, ANTHROPIC_STREAM, size).out).toBe(whole)
  })

  it("is not complete without message_stop, and refuses a frame that is not JSON or an error event", () => {
    const cut = ANTHROPIC_STREAM.slice(0, ANTHROPIC_STREAM.indexOf("event: message_stop"))
    expect(feed(make, cut, 50).complete).toBe(false)
    expect(() => make().push("event: x\ndata: {not json\n\n")).toThrow(MalformedUpstream)
    expect(() => make().push(anthropicEvent({ type: "error", error: { type: "overloaded_error" } }))).toThrow(MalformedUpstream)
  })

  it("a chunk holding good, bad and good frames hands over the good frames before the bad one, then fails", () => {
    const good = ANTHROPIC_STREAM.slice(0, ANTHROPIC_STREAM.indexOf("event: content_block_stop"))
    const after = anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " after" } })
    const alone = make().push(good)
    const t = make()
    const out = t.push(`${good}event: content_block_delta\ndata: {not json\n\n${after}`)
    // The same frames as when the good ones arrive in a chunk of their own: the text before the bad frame reaches
    // the client; the frame after it does not, as it would not in a later chunk (the answer ends at the bad frame).
    expect(out).toBe(alone)
    expect(dataFrames(out).map((f) => f.choices[0]?.delta?.content ?? "").join("")).toBe("Hé <PERSON_1>")
    expect(t.complete()).toBe(false)
    expect(() => t.push(after)).toThrow(MalformedUpstream)
    expect(t.complete()).toBe(false)
  })
})

describe("openaiStreamToAnthropic", () => {
  it("maps text and tool calls to content blocks, usage and stop reason into message_delta, then message_stop", () => {
    const { out, complete } = feed(openaiStreamToAnthropic, OPENAI_STREAM, OPENAI_STREAM.length)
    expect(complete).toBe(true)
    const events = dataFrames(out)
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
      "content_block_start", "content_block_delta", "content_block_stop",
      "message_delta", "message_stop"
    ])
    expect(events[0].message).toMatchObject({ id: "chatcmpl-1", model: "gpt-x", role: "assistant", content: [] })
    expect(events[2].delta.text + events[3].delta.text).toBe("Hé <EMAIL_1>")
    expect(events[5]).toMatchObject({ index: 1, content_block: { type: "tool_use", id: "call_1", name: "a" } })
    expect(events[6].delta.partial_json + events[7].delta.partial_json).toBe("{\"k\":1}")
    expect(events[9]).toMatchObject({ index: 2, content_block: { type: "tool_use", id: "call_2", name: "b" } })
    expect(events[12]).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 12, output_tokens: 9 }
    })
    // Every event line names its type, as Anthropic's own stream does.
    expect(out.split("\n\n").filter(Boolean).every((f) => /^event: [a-z_]+\ndata: /.test(f))).toBe(true)
  })

  it("gives the same events however the upstream bytes were cut", () => {
    const whole = feed(openaiStreamToAnthropic, OPENAI_STREAM, OPENAI_STREAM.length).out
    for (const size of [1, 3, 5, 64]) expect(feed(openaiStreamToAnthropic, OPENAI_STREAM, size).out).toBe(whole)
  })

  it("is not complete without [DONE], and refuses an error frame or a tool call without a name", () => {
    expect(feed(openaiStreamToAnthropic, OPENAI_STREAM.replace("data: [DONE]\n\n", ""), 40).complete).toBe(false)
    expect(() => openaiStreamToAnthropic().push(`data: ${JSON.stringify({ error: { message: "x" } })}\n\n`)).toThrow(MalformedUpstream)
    expect(() => openaiStreamToAnthropic().push(openaiChunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "{}" } }] } }] }))).toThrow(MalformedUpstream)
    expect(() => openaiStreamToAnthropic().push("data: [DONE]\n\n")).toThrow(MalformedUpstream)
  })

  it("a chunk holding good, bad and good frames hands over the good frames before the bad one, then fails", () => {
    const firstTwo = OPENAI_STREAM.split("\n\n").slice(0, 2).map((f) => `${f}\n\n`).join("")
    const after = openaiChunk({ choices: [{ index: 0, delta: { content: " after" } }] })
    const alone = openaiStreamToAnthropic().push(firstTwo)
    const t = openaiStreamToAnthropic()
    const out = t.push(`${firstTwo}data: ${JSON.stringify({ error: { message: "overloaded" } })}\n\n${after}`)
    expect(out).toBe(alone)
    const events = dataFrames(out)
    expect(events.map((e) => e.type)).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta"])
    expect(events[2].delta.text + events[3].delta.text).toBe("Hé <EMAIL_1>")
    expect(t.complete()).toBe(false)
    expect(() => t.push(after)).toThrow(MalformedUpstream)
  })
})
