import { describe, expect, it } from "vitest"
import { anthropicRequestToOpenai } from "../../../../src/relay/translate/anthropicRequestToOpenai.ts"
import { openaiRequestToAnthropic } from "../../../../src/relay/translate/openaiRequestToAnthropic.ts"
import { UntranslatableField } from "../../../../src/relay/translate/translationError.ts"

const refusedAt = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    if (e instanceof UntranslatableField) return e.path
    throw e
  }
  return undefined
}

describe("openaiRequestToAnthropic", () => {
  it("maps images, developer prompts, merged tool results, tool choice and parallelism", () => {
    const out = openaiRequestToAnthropic({
      model: "ignored",
      max_completion_tokens: 50,
      parallel_tool_calls: false,
      tool_choice: { type: "function", function: { name: "f" } },
      messages: [
        { role: "developer", content: "rules" },
        { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "image_url", image_url: { url: "https://x/y.png" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }, { id: "c2", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }] },
        { role: "tool", tool_call_id: "c1", content: "one" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "two" }] }
      ]
    }, "claude-x")
    expect(out).toEqual({
      model: "claude-x",
      max_tokens: 50,
      system: [{ type: "text", text: "rules" }],
      tool_choice: { type: "tool", name: "f", disable_parallel_tool_use: true },
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }, { type: "image", source: { type: "url", url: "https://x/y.png" } }] },
        { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: {} }, { type: "tool_use", id: "c2", name: "f", input: { a: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "one" }, { type: "tool_result", tool_use_id: "c2", content: [{ type: "text", text: "two" }] }] }
      ]
    })
  })

  it("refuses what Messages cannot express, naming the field", () => {
    const base = { model: "m", messages: [{ role: "user", content: "x" }] }
    expect(refusedAt(() => openaiRequestToAnthropic({ ...base, response_format: { type: "json_object" } }, "c"))).toBe("response_format")
    expect(refusedAt(() => openaiRequestToAnthropic({ ...base, n: 2 }, "c"))).toBe("n")
    expect(refusedAt(() => openaiRequestToAnthropic({ ...base, messages: [{ role: "user", content: [{ type: "input_audio" }] }] }, "c"))).toBe("messages[0].content[0].type")
    expect(refusedAt(() => openaiRequestToAnthropic({ ...base, messages: [{ role: "assistant", content: null, tool_calls: [{ id: "1", function: { name: "f", arguments: "[1" } }] }] }, "c")))
      .toBe("messages[0].tool_calls[0].function.arguments")
  })
})

describe("anthropicRequestToOpenai", () => {
  it("puts tool results before the user's own parts, drops earlier thinking, maps images and the output cap", () => {
    const out = anthropicRequestToOpenai({
      model: "ignored",
      max_tokens: 20,
      system: [{ type: "text", text: "a" }, { type: "text", text: "b" }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      messages: [
        { role: "assistant", content: [{ type: "thinking", thinking: "...", signature: "s" }, { type: "text", text: "ok" }] },
        { role: "user", content: [{ type: "text", text: "see" }, { type: "tool_result", tool_use_id: "t1", content: "r" }, { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "BB" } }] }
      ]
    }, "gpt-x", { outputCapField: "max_tokens" })
    expect(out).toEqual({
      model: "gpt-x",
      max_tokens: 20,
      tool_choice: "required",
      parallel_tool_calls: false,
      messages: [
        { role: "system", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
        { role: "assistant", content: "ok" },
        { role: "tool", tool_call_id: "t1", content: "r" },
        { role: "user", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "data:image/jpeg;base64,BB" } }] }
      ]
    })
  })

  it("refuses what Chat Completions cannot express, naming the field", () => {
    const base = { model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] }
    expect(refusedAt(() => anthropicRequestToOpenai({ ...base, top_k: 3 }, "g", { outputCapField: "max_tokens" }))).toBe("top_k")
    expect(refusedAt(() => anthropicRequestToOpenai({ ...base, tools: [{ type: "web_search_20250305", name: "web_search" }] }, "g", { outputCapField: "max_tokens" }))).toBe("tools[0]")
    expect(refusedAt(() => anthropicRequestToOpenai({ ...base, messages: [{ role: "user", content: [{ type: "document", source: {} }] }] }, "g", { outputCapField: "max_tokens" })))
      .toBe("messages[0].content[0].type")
  })
})
