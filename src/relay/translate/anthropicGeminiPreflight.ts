/**
 * What an Anthropic Messages request may carry to OpenAI's format but not on to Gemini's, refused under the
 * Anthropic field's own path (the Anthropic -> Gemini translation goes through the OpenAI shape, whose paths the
 * caller never wrote): one tool call per turn, images by URL, and tool results that answer no earlier tool call.
 */
import { untranslatable } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

export const anthropicGeminiPreflight = (body: Json): void => {
  if (isObject(body.tool_choice) && body.tool_choice.disable_parallel_tool_use === true) {
    untranslatable("tool_choice.disable_parallel_tool_use", `"disable_parallel_tool_use" has no Gemini counterpart`)
  }
  const called = new Set<string>()
  const messages = Array.isArray(body.messages) ? body.messages : []
  messages.forEach((m, i) => {
    if (!isObject(m) || !Array.isArray(m.content)) return
    m.content.forEach((block, j) => {
      if (!isObject(block)) return
      const path = `messages[${i}].content[${j}]`
      if (block.type === "tool_use" && typeof block.id === "string") called.add(block.id)
      if (block.type === "image" && isObject(block.source) && block.source.type === "url") {
        untranslatable(`${path}.source`, "only base64 images can be translated to the Gemini format")
      }
      if (block.type === "tool_result" && typeof block.tool_use_id === "string" && !called.has(block.tool_use_id)) {
        untranslatable(`${path}.tool_use_id`, "a tool result must answer a tool_use of an earlier assistant turn to be translated")
      }
    })
  })
}
