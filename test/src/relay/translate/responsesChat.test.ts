import { describe, expect, it } from "vitest"
import { openaiResponseToResponses, openaiStreamToResponses, responsesRequestToOpenai } from "../../../../src/relay/translate/responsesChat.ts"
import { UntranslatableField } from "../../../../src/relay/translate/translationError.ts"

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1700000000, model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
const usageChunk = `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1700000000, model: "m", choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}\n\n`

const events = (sse: string) =>
  sse.split("\n\n").filter(Boolean).map((f) => ({ event: /^event: (.*)$/m.exec(f)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(f)![1]!) }))

describe("Responses -> chat completion request", () => {
  it("instructions, a string input, developer turns, assistant text, function calls joining their turn, outputs as tool messages", () => {
    const out = responsesRequestToOpenai({
      model: "x",
      instructions: "be brief",
      input: [
        { role: "developer", content: "rules" },
        { role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_image", image_url: "data:image/png;base64,AA", detail: "low" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "calling" }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "g", arguments: "{\"a\":1}" },
        { type: "function_call_output", call_id: "c1", output: "r1" },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "r2" }] }
      ],
      tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: true }],
      tool_choice: { type: "function", name: "f" },
      max_output_tokens: 10,
      text: { format: { type: "json_schema", name: "s", schema: { type: "object" }, strict: true } },
      stream: true
    }, "up", { outputCapField: "max_completion_tokens" })
    expect(out).toEqual({
      model: "up",
      messages: [
        { role: "system", content: "be brief" },
        { role: "system", content: "rules" },
        { role: "user", content: [{ type: "text", text: "a" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } }] },
        {
          role: "assistant",
          content: "calling",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "f", arguments: "{}" } },
            { id: "c2", type: "function", function: { name: "g", arguments: "{\"a\":1}" } }
          ]
        },
        { role: "tool", tool_call_id: "c1", content: "r1" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "r2" }] }
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 10,
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" }, strict: true } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object" }, strict: true } }
    })
  })

  it("refuses what a chat completion cannot carry, naming the field", () => {
    const refused = (body: Record<string, unknown>) => {
      try {
        responsesRequestToOpenai({ model: "x", input: "hi", ...body }, "up", { outputCapField: "max_tokens" })
      } catch (e) {
        if (e instanceof UntranslatableField) return e.path
        throw e
      }
      return undefined
    }
    expect(refused({ previous_response_id: "r" })).toBe("previous_response_id")
    expect(refused({ background: true })).toBe("background")
    expect(refused({ truncation: "auto" })).toBe("truncation")
    expect(refused({ truncation: "disabled" })).toBeUndefined()
    expect(refused({ store: true, metadata: { a: "b" } })).toBeUndefined()
    expect(refused({ input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] })).toBe("input[0].content[0].image_url")
    expect(refused({ input: [{ type: "item_reference", id: "i" }] })).toBe("input[0].type")
    expect(refused({ tool_choice: { type: "allowed_tools", tools: [] } })).toBe("tool_choice")
  })
})

describe("chat completion -> Response", () => {
  it("text, a refusal and tool calls become output items; the finish reason the status; usage renamed", () => {
    const r = openaiResponseToResponses({
      id: "chatcmpl-9",
      created: 5,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "hi", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }, finish_reason: "length" }],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6, prompt_tokens_details: { cached_tokens: 1 } }
    }, { instructions: "be brief" }, 99)
    expect(r).toMatchObject({
      id: "chatcmpl-9",
      object: "response",
      created_at: 5,
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      instructions: "be brief",
      output: [
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] },
        { type: "function_call", call_id: "c", name: "f", arguments: "{}", status: "completed" }
      ],
      usage: { input_tokens: 4, input_tokens_details: { cached_tokens: 1 }, output_tokens: 2, total_tokens: 6 }
    })
  })
})

describe("chat completion stream -> Responses events", () => {
  it("text then a tool call: items opened and closed in order, sequence numbers from 0, response.completed with the usage", () => {
    const t = openaiStreamToResponses({ clientBody: {}, nowSeconds: 1 })
    let sse = ""
    for (const frame of [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\"" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }),
      chunk({}, "tool_calls"),
      usageChunk
    ]) sse += t.push(frame)
    expect(t.complete()).toBe(false)
    sse += t.push("data: [DONE]\n\n")
    expect(t.complete()).toBe(true)
    const all = events(sse)
    expect(all.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed"
    ])
    expect(all.map((e) => e.data.sequence_number)).toEqual(all.map((_, i) => i))
    const completed = all.at(-1)!.data.response
    expect(completed.output).toMatchObject([
      { type: "message", content: [{ text: "Hello" }] },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{\"a\":1}" }
    ])
    expect(completed.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10 })
    expect(all.find((e) => e.event === "response.function_call_arguments.done")!.data.arguments).toBe("{\"a\":1}")
  })

  it("a cap that cut the answer ends with response.incomplete; frames cut anywhere give the same events", () => {
    const frames = chunk({ content: "abc" }) + chunk({}, "length") + usageChunk + "data: [DONE]\n\n"
    const whole = openaiStreamToResponses({ clientBody: {}, nowSeconds: 1 }).push(frames)
    for (const cut of [1, 17, 40, frames.length - 3]) {
      const t = openaiStreamToResponses({ clientBody: {}, nowSeconds: 1 })
      expect(t.push(frames.slice(0, cut)) + t.push(frames.slice(cut))).toBe(whole)
    }
    const last = events(whole).at(-1)!
    expect(last.event).toBe("response.incomplete")
    expect(last.data.response.incomplete_details).toEqual({ reason: "max_output_tokens" })
  })

  it("a stream without [DONE] is not complete", () => {
    const t = openaiStreamToResponses({ clientBody: {}, nowSeconds: 1 })
    t.push(chunk({ content: "abc" }) + chunk({}, "stop"))
    expect(t.complete()).toBe(false)
  })
})
