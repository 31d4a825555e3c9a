import { describe, expect, it } from "vitest"
import { anthropicRequestToConverse } from "../../../../../src/relay/translate/converse/anthropicRequestToConverse.ts"
import {
  converseAnswerId,
  converseResponseToClient,
  converseStreamToClient,
  converseUrl,
  openaiRequestToConverse
} from "../../../../../src/relay/translate/converse/converseTranslation.ts"
import { createEventStreamReader, encodeEvent, encodeException } from "../../../../../src/relay/translate/converse/eventStreamReader.ts"
import { MalformedUpstream, UntranslatableField } from "../../../../../src/relay/translate/translationError.ts"

const refusal = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    if (e instanceof UntranslatableField) return { path: e.path, reason: e.reason }
    throw e
  }
  throw new Error("not refused")
}

describe("anthropicRequestToConverse", () => {
  it("maps system, text and image blocks, tool use and results, tools, tool choice, caps and metadata", () => {
    const out = anthropicRequestToConverse({
      model: "anthropic.claude-3-5-haiku-20241022-v1:0",
      max_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ["END"],
      stream: true,
      system: [{ type: "text", text: "Be brief." }],
      metadata: { user_id: "u-1" },
      tools: [{ name: "lookup", description: "Look up", input_schema: { type: "object", properties: { q: { type: "string" } } } }],
      tool_choice: { type: "tool", name: "lookup" },
      messages: [
        { role: "user", content: [{ type: "text", text: "Hi <PERSON_1>" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0K" } }] },
        { role: "assistant", content: [{ type: "thinking", thinking: "x", signature: "s" }, { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "a" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found", is_error: true }, { type: "text", text: "and?" }] }
      ]
    })
    expect(out).toEqual({
      messages: [
        { role: "user", content: [{ text: "Hi <PERSON_1>" }, { image: { format: "png", source: { bytes: "iVBORw0K" } } }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "toolu_1", name: "lookup", input: { q: "a" } } }] },
        { role: "user", content: [{ toolResult: { toolUseId: "toolu_1", content: [{ text: "found" }], status: "error" } }, { text: "and?" }] }
      ],
      system: [{ text: "Be brief." }],
      inferenceConfig: { maxTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ["END"] },
      toolConfig: {
        tools: [{ toolSpec: { name: "lookup", description: "Look up", inputSchema: { json: { type: "object", properties: { q: { type: "string" } } } } } }],
        toolChoice: { tool: { name: "lookup" } }
      },
      requestMetadata: { user_id: "u-1" }
    })
    // Neither the model (it is in the URL) nor the stream flag (the path says it) is in the body.
    expect(Object.keys(out)).not.toContain("model")
    expect(Object.keys(out)).not.toContain("stream")
  })

  it("refuses what Converse cannot express, naming the field", () => {
    const base = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] }
    expect(refusal(() => anthropicRequestToConverse({ ...base, top_k: 5 })).path).toBe("top_k")
    expect(refusal(() => anthropicRequestToConverse({ ...base, tools: [{ name: "t", input_schema: {} }], tool_choice: { type: "none" } })).path).toBe("tool_choice")
    expect(refusal(() => anthropicRequestToConverse({ ...base, tools: [{ name: "t", input_schema: {} }], tool_choice: { type: "auto", disable_parallel_tool_use: true } })).path)
      .toBe("tool_choice.disable_parallel_tool_use")
    expect(refusal(() =>
      anthropicRequestToConverse({ ...base, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }] })
    ).path).toBe("messages[0].content[0].source")
    expect(refusal(() =>
      anthropicRequestToConverse({ ...base, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/tiff", data: "AA" } }] }] })
    ).path).toBe("messages[0].content[0].source.media_type")
    expect(refusal(() => anthropicRequestToConverse({ ...base, messages: [{ role: "user", content: [{ type: "document", source: {} }] }] })).path)
      .toBe("messages[0].content[0].type")
  })
})

describe("openaiRequestToConverse", () => {
  it("maps system/developer prompts, data: URL images, tool calls and merged tool results", () => {
    const out = openaiRequestToConverse({
      model: "x",
      max_completion_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      tool_choice: "required",
      messages: [
        { role: "system", content: "S" },
        { role: "developer", content: "D" },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"q\":1}" } }] },
        { role: "tool", tool_call_id: "call_1", content: "one" },
        { role: "user", content: "thanks" }
      ]
    }, "amazon.nova-lite-v1:0")
    expect(out).toEqual({
      messages: [
        { role: "user", content: [{ text: "look" }, { image: { format: "jpeg", source: { bytes: "/9j/" } } }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "call_1", name: "lookup", input: { q: 1 } } }] },
        { role: "user", content: [{ toolResult: { toolUseId: "call_1", content: [{ text: "one" }] } }, { text: "thanks" }] }
      ],
      system: [{ text: "S" }, { text: "D" }],
      inferenceConfig: { maxTokens: 50 },
      toolConfig: { tools: [{ toolSpec: { name: "lookup", inputSchema: { json: { type: "object" } } } }], toolChoice: { any: {} } }
    })
  })

  it("refuses image URLs and parallel_tool_calls: false under the client's own field names", () => {
    expect(refusal(() =>
      openaiRequestToConverse({ model: "x", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/a.png" } }] }] }, "m")
    ).path).toBe("messages[0].content[0].image_url.url")
    expect(refusal(() => openaiRequestToConverse({ model: "x", parallel_tool_calls: false, messages: [{ role: "user", content: "x" }] }, "m")).path)
      .toBe("parallel_tool_calls")
    expect(refusal(() => openaiRequestToConverse({ model: "x", n: 2, messages: [{ role: "user", content: "x" }] }, "m")).path).toBe("n")
  })

  it("puts the model id in the path, encoded once", () => {
    expect(converseUrl("https://bedrock-runtime.eu-west-1.amazonaws.com", "anthropic.claude-3-5-haiku-20241022-v1:0", true))
      .toBe("https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream")
  })
})

const ANSWER = {
  output: { message: { role: "assistant", content: [{ reasoningContent: { reasoningText: { text: "hm" } } }, { text: "Hello <PERSON_1>" }, { toolUse: { toolUseId: "tu_1", name: "lookup", input: { q: "a" } } }] } },
  stopReason: "tool_use",
  usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27, cacheReadInputTokens: 5 },
  metrics: { latencyMs: 100 }
}

describe("converseResponseToClient", () => {
  const meta = { id: "msg_bdrk_r1", model: "amazon.nova-pro-v1:0" }
  it("gives an Anthropic message: text and tool_use blocks, stop reason, usage with cache reads apart", () => {
    expect(converseResponseToClient("anthropic", ANSWER, meta, 0)).toEqual({
      id: "msg_bdrk_r1",
      type: "message",
      role: "assistant",
      model: "amazon.nova-pro-v1:0",
      content: [{ type: "text", text: "Hello <PERSON_1>" }, { type: "tool_use", id: "tu_1", name: "lookup", input: { q: "a" } }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 5 }
    })
  })
  it("gives an OpenAI chat completion: message with tool calls, finish reason, prompt tokens counting cache reads", () => {
    const out = converseResponseToClient("openai", ANSWER, meta, 1_700_000_000) as any
    expect(out.object).toBe("chat.completion")
    expect(out.choices[0].message).toEqual({
      role: "assistant",
      content: "Hello <PERSON_1>",
      tool_calls: [{ id: "tu_1", type: "function", function: { name: "lookup", arguments: "{\"q\":\"a\"}" } }],
      refusal: null
    })
    expect(out.choices[0].finish_reason).toBe("tool_calls")
    expect(out.usage).toEqual({ prompt_tokens: 25, completion_tokens: 7, total_tokens: 32 })
  })
  it("maps every stop reason and refuses what is not a Converse answer", () => {
    const finish = (stopReason: string) => (converseResponseToClient("openai", { ...ANSWER, stopReason }, meta, 0) as any).choices[0].finish_reason
    expect(["end_turn", "max_tokens", "stop_sequence", "guardrail_intervened", "content_filtered", "model_context_window_exceeded"].map(finish))
      .toEqual(["stop", "length", "stop", "content_filter", "content_filter", "length"])
    expect(() => converseResponseToClient("anthropic", { choices: [] }, meta, 0)).toThrow(MalformedUpstream)
  })
  it("takes Bedrock's request id as the answer id", () => {
    expect(converseAnswerId({ "x-amzn-requestid": "0f1e2d3c-aaaa-bbbb" })).toBe("msg_bdrk_0f1e2d3c-aaaa-bbbb")
    expect(converseAnswerId({ "x-amzn-requestid": "bad id\n" })).toMatch(/^msg_bdrk_[0-9a-f-]{36}$/)
  })
})

const STREAM_EVENTS: Array<[string, Record<string, unknown>]> = [
  ["messageStart", { role: "assistant", p: "abc" }],
  ["contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hé " }, p: "a" }],
  ["contentBlockDelta", { contentBlockIndex: 0, delta: { text: "<PERSON_1>" } }],
  ["contentBlockStop", { contentBlockIndex: 0 }],
  ["contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tu_9", name: "lookup" } } }],
  ["contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: "{\"q\":" } } }],
  ["contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: "\"x\"}" } } }],
  ["contentBlockStop", { contentBlockIndex: 1 }],
  ["messageStop", { stopReason: "tool_use" }],
  ["metadata", { usage: { inputTokens: 11, outputTokens: 6, totalTokens: 17 }, metrics: { latencyMs: 5 } }]
]
const STREAM = Buffer.concat(STREAM_EVENTS.map(([t, p]) => encodeEvent(t, p)))
const meta = { id: "msg_bdrk_s1", model: "amazon.nova-pro-v1:0" }

const feed = (client: "openai" | "anthropic", bytes: Uint8Array, size: number) => {
  const t = converseStreamToClient(client, meta, { includeUsage: true, nowSeconds: 1_700_000_000 })
  let out = ""
  for (let i = 0; i < bytes.length; i += size) out += t.push("", bytes.subarray(i, i + size))
  return { out, complete: t.complete(), usage: t.usage() }
}
const dataFrames = (sse: string) => sse.split("\n\n").filter((f) => f.includes("data: {")).map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)))

describe("converseStreamToClient", () => {
  it("gives Anthropic events: text block, tool_use block with input_json deltas, message_delta with usage, message_stop", () => {
    const { out, complete, usage } = feed("anthropic", STREAM, STREAM.length)
    expect(complete).toBe(true)
    expect(usage).toEqual({ responseId: "msg_bdrk_s1", inputTokens: 11, outputTokens: 6 })
    const events = dataFrames(out)
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
    expect(events[1].content_block).toEqual({ type: "text", text: "" })
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe("Hé <PERSON_1>")
    expect(events[5]).toEqual({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "tu_9", name: "lookup", input: {} } })
    expect(events.filter((e) => e.delta?.type === "input_json_delta").map((e) => e.delta.partial_json).join("")).toBe("{\"q\":\"x\"}")
    expect(events[9]).toEqual({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { input_tokens: 11, output_tokens: 6 } })
  })

  it("gives OpenAI chunks ending with the finish reason, the usage chunk and [DONE]", () => {
    const { out, complete } = feed("openai", STREAM, STREAM.length)
    expect(complete).toBe(true)
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true)
    const frames = dataFrames(out)
    expect(frames.map((f) => f.choices[0]?.delta?.content ?? "").join("")).toBe("Hé <PERSON_1>")
    const toolDeltas = frames.flatMap((f) => f.choices[0]?.delta?.tool_calls ?? [])
    expect(toolDeltas[0]).toEqual({ index: 0, id: "tu_9", type: "function", function: { name: "lookup", arguments: "" } })
    expect(frames.at(-2).choices[0].finish_reason).toBe("tool_calls")
    expect(frames.at(-1).usage).toEqual({ prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 })
  })

  it("gives the same output whatever the bytes were cut into (1 to 64 bytes)", () => {
    for (const client of ["openai", "anthropic"] as const) {
      const whole = feed(client, STREAM, STREAM.length).out
      for (const size of [1, 2, 3, 5, 7, 13, 64]) expect(feed(client, STREAM, size).out).toBe(whole)
    }
  })

  it("is incomplete until the metadata event, which follows messageStop", () => {
    const withoutMetadata = Buffer.concat(STREAM_EVENTS.slice(0, -1).map(([t, p]) => encodeEvent(t, p)))
    const cut = feed("anthropic", withoutMetadata, 100)
    expect(cut.complete).toBe(false)
    // Without Converse's counts, output is estimated from the 13 text and 9 tool-input characters the client was given.
    expect(cut.usage).toEqual({ responseId: "msg_bdrk_s1", inputTokens: undefined, outputTokens: 6 })
    expect(feed("openai", withoutMetadata, 100).out).not.toContain("[DONE]")
  })

  it("refuses a frame whose checksum fails, a length out of range, an exception event and a non-JSON payload", () => {
    const frame = encodeEvent("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } })
    const corrupt = Uint8Array.from(frame)
    corrupt[corrupt.length - 6] = corrupt[corrupt.length - 6]! ^ 0xff
    const t = converseStreamToClient("anthropic", meta, { includeUsage: false, nowSeconds: 0 })
    t.push("", encodeEvent("messageStart", { role: "assistant" }))
    expect(() => t.push("", corrupt)).toThrow(MalformedUpstream)

    expect(() => [...createEventStreamReader().push(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]))]).toThrow(MalformedUpstream)
    expect(() => converseStreamToClient("openai", meta, { includeUsage: false, nowSeconds: 0 }).push("", encodeException("throttlingException", "slow down"))).toThrow(MalformedUpstream)
    const early = converseStreamToClient("anthropic", meta, { includeUsage: false, nowSeconds: 0 })
    early.push("", encodeEvent("messageStart", {}))
    expect(() => early.push("", encodeEvent("metadata", {}))).toThrow(MalformedUpstream)
  })

  it("hands over the events before a bad frame arriving in the same chunk, then fails on the next push, never completing", () => {
    const frame = encodeEvent("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "x" } })
    const corrupt = Uint8Array.from(frame)
    corrupt[corrupt.length - 6] = corrupt[corrupt.length - 6]! ^ 0xff
    const t = converseStreamToClient("anthropic", meta, { includeUsage: false, nowSeconds: 0 })
    const out = t.push("", Buffer.concat([encodeEvent("messageStart", {}), frame, corrupt, frame]))
    expect(dataFrames(out).filter((e) => e.type === "content_block_delta").map((e) => e.delta.text)).toEqual(["x"])
    expect(t.complete()).toBe(false)
    expect(() => t.push("", frame)).toThrow(MalformedUpstream)
  })

  it("keeps an unfinished frame until its last byte arrives", () => {
    const reader = createEventStreamReader()
    const frame = encodeEvent("messageStart", { role: "assistant" })
    expect([...reader.push(frame.subarray(0, 10))]).toEqual([])
    expect(reader.pending()).toBe(10)
    const [message] = [...reader.push(frame.subarray(10))]
    expect(message!.type).toBe("messageStart")
    expect(JSON.parse(Buffer.from(message!.payload).toString())).toEqual({ role: "assistant" })
    expect(reader.pending()).toBe(0)
  })
})
