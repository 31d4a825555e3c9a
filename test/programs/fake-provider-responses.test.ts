import Anthropic from "@anthropic-ai/sdk"
import { createOpenAI } from "@ai-sdk/openai"
import { generateText, jsonSchema, streamText, tool } from "ai"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeCompletionTokens, fakePromptTokens, fakeReplyText, type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"

/**
 * The fake provider speaks OpenAI's Responses API (JSON and named SSE events) and Anthropic's token counting well
 * enough for the official clients: the `openai` package and the Vercel AI SDK read its answers as OpenAI's, the
 * Anthropic SDK its counts.
 */
let provider: FakeProvider
let openai: OpenAI

beforeAll(async () => {
  provider = await startFakeProvider({ port: 0, streamPieceChars: 4 })
  openai = new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "x", maxRetries: 0 })
})
afterAll(async () => {
  await provider.close()
})
beforeEach(() => provider.reset())

const frames = (text: string) =>
  text.split("\n\n").filter(Boolean).map((frame) => {
    const event = /^event: (.*)$/m.exec(frame)?.[1]
    const data = JSON.parse(/^data: (.*)$/m.exec(frame)![1]!)
    return { event, data }
  })

describe("fake provider: OpenAI Responses", () => {
  it("answers a Response object echoing the last user input, with usage from the body (openai SDK)", async () => {
    const response = await openai.responses.create({ model: "local-chat", instructions: "be brief", input: "hello <PERSON_1> there" })
    expect(response.object).toBe("response")
    expect(response.id).toMatch(/^resp_fake_\d+$/)
    expect(response.status).toBe("completed")
    expect(response.output_text).toBe(fakeReplyText("hello <PERSON_1> there"))
    expect(response.instructions).toBe("be brief")
    expect(response.usage).toMatchObject({
      input_tokens: fakePromptTokens(provider.received[0]!.body.length),
      output_tokens: fakeCompletionTokens(fakeReplyText("hello <PERSON_1> there"))
    })
    expect(provider.received[0]!.path).toBe("/v1/responses")
  })

  it("reads message items (string content and input_text parts), joining the last user turn's parts", async () => {
    const response = await openai.responses.create({
      model: "local-chat",
      input: [
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        { type: "message", role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_text", text: "b" }] }
      ]
    })
    expect(response.output_text).toBe(fakeReplyText("a\nb"))
  })

  it("streams named events with sequence numbers, ends with response.completed and no [DONE]; the SDK assembles the text", async () => {
    const res = await fetch(`${provider.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, input: "alpha beta" })
    })
    const text = await res.text()
    expect(res.headers.get("content-type")).toBe("text/event-stream")
    expect(text).not.toContain("[DONE]")
    const events = frames(text)
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(Math.ceil(fakeReplyText("alpha beta").length / 4)).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed"
    ])
    for (const [i, e] of events.entries()) {
      expect(e.data.type).toBe(e.event)
      expect(e.data.sequence_number).toBe(i)
    }
    expect(events.at(-1)!.data.response.usage.output_tokens).toBe(fakeCompletionTokens(fakeReplyText("alpha beta")))

    const stream = openai.responses.stream({ model: "local-chat", input: "alpha beta" })
    const final = await stream.finalResponse()
    expect(final.output_text).toBe(fakeReplyText("alpha beta"))
  })

  it("calls the first function tool with the user's text; a function_call_output is answered with its echo", async () => {
    const tools = [{ type: "function" as const, name: "send_mail", parameters: { type: "object", properties: { text: { type: "string" } } }, strict: false }]
    const first = await openai.responses.create({ model: "local-chat", input: "write to <EMAIL_1>", tools })
    const call = first.output[0]!
    expect(call).toMatchObject({ type: "function_call", name: "send_mail", status: "completed" })
    if (call.type !== "function_call") throw new Error("expected a function call")
    expect(JSON.parse(call.arguments)).toEqual({ text: "write to <EMAIL_1>" })

    const second = await openai.responses.create({
      model: "local-chat",
      tools,
      input: [
        { role: "user", content: "write to <EMAIL_1>" },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "sent to <EMAIL_1>" }
      ]
    })
    expect(second.output_text).toBe(fakeReplyText("sent to <EMAIL_1>"))

    const streamed = await openai.responses.stream({ model: "local-chat", input: "write to <EMAIL_1>", tools }).finalResponse()
    const streamedCall = streamed.output[0]!
    if (streamedCall.type !== "function_call") throw new Error("expected a function call")
    expect(JSON.parse(streamedCall.arguments)).toEqual({ text: "write to <EMAIL_1>" })
  })

  it("sends an event of the type named by metadata.fake_unknown_event before response.completed", async () => {
    const res = await fetch(`${provider.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, input: "hi", metadata: { fake_unknown_event: "response.novel_thing" } })
    })
    const events = frames(await res.text())
    expect(events.at(-2)).toMatchObject({ event: "response.novel_thing", data: { type: "response.novel_thing", text: fakeReplyText("hi") } })
    expect(events.at(-1)!.event).toBe("response.completed")
  })

  it("cuts a Responses stream after n events (before response.completed)", async () => {
    provider.setBehaviour({ kind: "cut-stream", afterChunks: 3 })
    const res = await fetch(`${provider.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", stream: true, input: "hi" })
    })
    const text = await res.text().catch(() => "")
    expect(text).not.toContain("response.completed")
  })
})

describe("fake provider: the Vercel AI SDK reads its Responses answers as OpenAI's", () => {
  const model = () => createOpenAI({ baseURL: `${provider.url}/v1`, apiKey: "x" }).responses("local-chat")

  it("generateText and streamText", async () => {
    const generated = await generateText({ model: model(), prompt: "hello there", maxRetries: 0 })
    expect(generated.text).toBe(fakeReplyText("hello there"))
    expect(generated.usage.outputTokens).toBe(fakeCompletionTokens(fakeReplyText("hello there")))
    const streamed = streamText({ model: model(), prompt: "hello there", maxRetries: 0 })
    expect(await streamed.text).toBe(fakeReplyText("hello there"))
  })

  it("a function tool call", async () => {
    const generated = await generateText({
      model: model(),
      prompt: "mail this",
      tools: { send_mail: tool({ inputSchema: jsonSchema<{ text: string }>({ type: "object", properties: { text: { type: "string" } } }) }) },
      maxRetries: 0
    })
    expect(generated.toolCalls[0]).toMatchObject({ toolName: "send_mail", input: { text: "mail this" } })
  })
})

describe("fake provider: Anthropic token counting", () => {
  it("counts a Messages body as ceil(bytes / 4) (Anthropic SDK)", async () => {
    const anthropic = new Anthropic({ baseURL: provider.url, apiKey: "x", maxRetries: 0 })
    const counted = await anthropic.messages.countTokens({ model: "local-chat", messages: [{ role: "user", content: "count me" }] })
    expect(provider.received[0]!.path).toBe("/v1/messages/count_tokens")
    expect(counted.input_tokens).toBe(fakePromptTokens(provider.received[0]!.body.length))
  })
})
