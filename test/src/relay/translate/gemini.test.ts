import { describe, expect, it } from "vitest"
import { geminiResponseToOpenai, geminiUsage } from "../../../../src/relay/translate/geminiResponses.ts"
import { geminiStreamToOpenai } from "../../../../src/relay/translate/geminiStreamToOpenai.ts"
import { openaiRequestToGemini } from "../../../../src/relay/translate/openaiRequestToGemini.ts"
import { translationFor } from "../../../../src/relay/translate/translation.ts"
import { MalformedUpstream, UntranslatableField } from "../../../../src/relay/translate/translationError.ts"

// Frames as Gemini sends them with alt=sse: CRLF line ends, each a whole GenerateContentResponse, usage cumulative.
const frame = (data: Record<string, unknown>) => `data: ${JSON.stringify({ responseId: "resp-1", modelVersion: "gemini-2.5-flash", ...data })}\r\n\r\n`
const GEMINI_STREAM = [
  frame({ candidates: [{ content: { role: "model", parts: [{ text: "thinking...", thought: true }] } }], usageMetadata: { promptTokenCount: 11 } }),
  frame({ candidates: [{ content: { role: "model", parts: [{ text: "Hé " }] } }], usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 1 } }),
  frame({ candidates: [{ content: { role: "model", parts: [{ text: "<PERSON_1>" }, { functionCall: { name: "lookup", args: { q: "x" } } }] } }] }),
  frame({
    candidates: [{ content: { role: "model", parts: [{ functionCall: { id: "fc-2", name: "other", args: {} } }] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 6, thoughtsTokenCount: 4, totalTokenCount: 21 }
  })
].join("")

const feed = (text: string, size: number, includeUsage = true) => {
  const t = geminiStreamToOpenai({ includeUsage, nowSeconds: 1_700_000_000, upstreamModel: "gemini-2.5-flash" })
  let out = ""
  for (let i = 0; i < text.length; i += size) out += t.push(text.slice(i, i + size))
  return { out, complete: t.complete(), usage: t.usage!() }
}
const dataFrames = (sse: string) => sse.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)))

describe("geminiStreamToOpenai", () => {
  it("maps text and whole function calls to chunks, the finish frame to tool_calls, usage (thoughts billed as output) and [DONE]", () => {
    const { out, complete, usage } = feed(GEMINI_STREAM, GEMINI_STREAM.length)
    expect(complete).toBe(true)
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true)
    const frames = dataFrames(out)
    expect(frames.every((f) => f.object === "chat.completion.chunk" && f.id === "resp-1" && f.model === "gemini-2.5-flash")).toBe(true)
    // The thought summary is not part of the answer.
    expect(frames.map((f) => f.choices[0]?.delta?.content ?? "").join("")).toBe("Hé <PERSON_1>")
    const calls = frames.flatMap((f) => f.choices[0]?.delta?.tool_calls ?? [])
    expect(calls).toEqual([
      { index: 0, id: "call_resp-1_0", type: "function", function: { name: "lookup", arguments: "{\"q\":\"x\"}" } },
      { index: 1, id: "fc-2", type: "function", function: { name: "other", arguments: "{}" } }
    ])
    expect(frames.at(-2).choices[0].finish_reason).toBe("tool_calls")
    expect(frames.at(-1).usage).toEqual({ prompt_tokens: 11, completion_tokens: 10, total_tokens: 21 })
    expect(usage).toEqual({ responseId: "resp-1", inputTokens: 11, outputTokens: 10 })
  })

  it("gives the same output whatever the upstream bytes were cut into", () => {
    const whole = feed(GEMINI_STREAM, GEMINI_STREAM.length).out
    for (const size of [1, 2, 3, 7, 16, 64]) expect(feed(GEMINI_STREAM, size).out).toBe(whole)
  })

  it("sends no usage chunk unless the client asked, and is incomplete without a finish reason", () => {
    expect(dataFrames(feed(GEMINI_STREAM, 50, false).out).some((f) => f.usage !== undefined)).toBe(false)
    const cut = GEMINI_STREAM.slice(0, GEMINI_STREAM.lastIndexOf("data: "))
    const partial = feed(cut, 9)
    expect(partial.complete).toBe(false)
    expect(partial.out).not.toContain("[DONE]")
    // What was delivered is still metered from the last usage Gemini sent.
    expect(partial.usage).toMatchObject({ inputTokens: 11, outputTokens: 1 })
  })

  it("maps MAX_TOKENS to length and a safety stop to content_filter", () => {
    const ending = (reason: string) =>
      dataFrames(feed(frame({ candidates: [{ content: { parts: [{ text: "a" }] }, finishReason: reason }] }), 1000).out).at(-2).choices[0].finish_reason
    expect(ending("MAX_TOKENS")).toBe("length")
    expect(ending("SAFETY")).toBe("content_filter")
    expect(ending("PROHIBITED_CONTENT")).toBe("content_filter")
    expect(ending("STOP")).toBe("stop")
  })

  it("refuses non-JSON frames, error frames and nameless function calls", () => {
    const push = (text: string) => () => geminiStreamToOpenai({ includeUsage: false, nowSeconds: 0, upstreamModel: "m" }).push(text)
    expect(push("data: not json\r\n\r\n")).toThrow(MalformedUpstream)
    expect(push(`data: ${JSON.stringify({ error: { code: 500, message: "x", status: "INTERNAL" } })}\n\n`)).toThrow(MalformedUpstream)
    expect(push(frame({ candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] }))).toThrow(MalformedUpstream)
  })
})

describe("geminiResponseToOpenai", () => {
  it("reads a prompt blocked by Gemini's filters as an empty content_filter answer", () => {
    const answer = geminiResponseToOpenai({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }, "gemini-2.5-pro", 1)
    expect(answer.choices).toEqual([{ index: 0, message: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: "content_filter" }])
    expect(answer.usage).toEqual({ prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 })
  })

  it("refuses an answer without candidates or of another shape", () => {
    expect(() => geminiResponseToOpenai({ candidates: [] }, "m", 1)).toThrow(MalformedUpstream)
    expect(() => geminiResponseToOpenai({ choices: [] }, "m", 1)).toThrow(MalformedUpstream)
    expect(() => geminiResponseToOpenai([], "m", 1)).toThrow(MalformedUpstream)
  })

  it("meters nothing it was not told: no usageMetadata means no counts (the relay then estimates)", () => {
    expect(geminiUsage({ candidates: [] })).toEqual({ responseId: undefined, inputTokens: undefined, outputTokens: undefined })
  })
})

describe("thought signatures", () => {
  const SIG = "c2lnbmF0dXJlLTE="
  const signed = { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "x" } }, thoughtSignature: SIG }, { functionCall: { name: "plain", args: {} } }] }, finishReason: "STOP" }] }

  it("a function call's signature rides on the OpenAI tool call as extra_content.google.thought_signature, streamed or not", () => {
    const answer = geminiResponseToOpenai({ responseId: "r", ...signed }, "gemini-2.5-flash", 1) as any
    expect(answer.choices[0].message.tool_calls).toEqual([
      { id: "call_r_0", type: "function", function: { name: "lookup", arguments: "{\"q\":\"x\"}" }, extra_content: { google: { thought_signature: SIG } } },
      { id: "call_r_1", type: "function", function: { name: "plain", arguments: "{}" } }
    ])
    const streamed = dataFrames(feed(frame(signed), 5).out).flatMap((f) => f.choices[0]?.delta?.tool_calls ?? [])
    expect(streamed.map((c) => c.extra_content)).toEqual([{ google: { thought_signature: SIG } }, undefined])
  })

  it("a signature sent back on a tool call goes to Gemini on that functionCall part; none, or an empty one, adds nothing", () => {
    const body = openaiRequestToGemini({
      model: "gemini-2.5-flash",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "a", arguments: "{}" }, extra_content: { google: { thought_signature: SIG } } },
            { id: "c2", type: "function", function: { name: "b", arguments: "{}" }, extra_content: { google: { thought_signature: "" } } },
            { id: "c3", type: "function", function: { name: "c", arguments: "{}" } }
          ]
        },
        { role: "tool", tool_call_id: "c1", content: "r1" }
      ]
    })
    expect((body as any).contents[1]).toEqual({
      role: "model",
      parts: [
        { functionCall: { id: "c1", name: "a", args: {} }, thoughtSignature: SIG },
        { functionCall: { id: "c2", name: "b", args: {} } },
        { functionCall: { id: "c3", name: "c", args: {} } }
      ]
    })
  })
})

describe("openaiRequestToGemini", () => {
  const refused = (body: Record<string, unknown>) => {
    try {
      openaiRequestToGemini(body)
    } catch (e) {
      if (e instanceof UntranslatableField) return e.path
      throw e
    }
    return undefined
  }

  it("merges parallel tool results into one user turn, maps a forced function and a JSON schema answer", () => {
    const body = openaiRequestToGemini({
      model: "gemini-2.5-flash",
      seed: 7,
      top_p: 0.5,
      response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "object" } } },
      tool_choice: { type: "function", function: { name: "a" } },
      tools: [{ type: "function", function: { name: "a" } }, { type: "function", function: { name: "b", parameters: { type: "object" } } }],
      messages: [
        { role: "developer", content: "rules" },
        { role: "user", content: "go" },
        { role: "assistant", content: "ok", tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "{}" } }, { id: "c2", type: "function", function: { name: "b", arguments: "{\"k\":1}" } }] },
        { role: "tool", tool_call_id: "c1", content: "r1" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "r2" }] }
      ]
    })
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: "rules" }] },
      contents: [
        { role: "user", parts: [{ text: "go" }] },
        { role: "model", parts: [{ text: "ok" }, { functionCall: { id: "c1", name: "a", args: {} } }, { functionCall: { id: "c2", name: "b", args: { k: 1 } } }] },
        {
          role: "user",
          parts: [
            { functionResponse: { id: "c1", name: "a", response: { content: "r1" } } },
            { functionResponse: { id: "c2", name: "b", response: { content: "r2" } } }
          ]
        }
      ],
      tools: [{ functionDeclarations: [{ name: "a" }, { name: "b", parametersJsonSchema: { type: "object" } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["a"] } },
      generationConfig: { maxOutputTokens: 4096, topP: 0.5, seed: 7, responseMimeType: "application/json", responseJsonSchema: { type: "object" } }
    })
  })

  it("refuses fields Gemini cannot express, naming them", () => {
    const messages = [{ role: "user", content: "x" }]
    expect(refused({ model: "m", messages, logprobs: true })).toBe("logprobs")
    expect(refused({ model: "m", messages, n: 2 })).toBe("n")
    expect(refused({ model: "m", messages, response_format: { type: "json_schema" } })).toBe("response_format")
    expect(refused({ model: "m", messages: [{ role: "tool", tool_call_id: "nobody", content: "r" }] })).toBe("messages[0].tool_call_id")
    expect(refused({ model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] })).toBe("messages[0].content[0].type")
  })

  it("is dispatched for both client formats to a gemini endpoint, and never for a route of the same format", () => {
    const upstream = { wire: "gemini" as const, providerSlug: "google", model: "gemini-2.5-flash" }
    expect(translationFor("chat.completions", upstream)).toMatchObject({ from: "openai", to: "gemini" })
    expect(translationFor("messages", upstream)).toMatchObject({ from: "anthropic", to: "gemini" })
    expect(translationFor("embeddings", upstream)).toBeUndefined()
    expect(translationFor("chat.completions", { ...upstream, wire: "openai" })).toBeUndefined()
  })
})
