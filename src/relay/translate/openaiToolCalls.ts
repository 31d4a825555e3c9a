/**
 * An OpenAI request's tool calls and function tools, read once for translation into another format: each call's id, function
 * name and arguments parsed as the JSON object every other format carries them as. Shared by the Anthropic and
 * Gemini request translators, so both refuse the same malformed calls with the same paths and reasons.
 */
import { untranslatable } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

export interface OpenaiToolCall {
  readonly id: string
  readonly name: string
  readonly args: Json
  /** Gemini's thought signature when the client sent it back (`extra_content.google.thought_signature`). */
  readonly thoughtSignature: string | undefined
}

export const openaiToolCalls = (toolCalls: unknown, path: string): Array<OpenaiToolCall> => {
  if (toolCalls === undefined || toolCalls === null) return []
  if (!Array.isArray(toolCalls)) return untranslatable(path, `"tool_calls" must be an array`)
  return toolCalls.map((call, i) => {
    const p = `${path}[${i}]`
    const fn = isObject(call) ? call.function : undefined
    if (!isObject(call) || typeof call.id !== "string" || !isObject(fn) || typeof fn.name !== "string") {
      return untranslatable(p, "a tool call needs an id and a function name")
    }
    let args: unknown
    try {
      args = JSON.parse(typeof fn.arguments === "string" && fn.arguments !== "" ? fn.arguments : "{}")
    } catch {
      return untranslatable(`${p}.function.arguments`, "tool call arguments must be a JSON object to be translated")
    }
    if (!isObject(args)) return untranslatable(`${p}.function.arguments`, "tool call arguments must be a JSON object to be translated")
    // Gemini's thought signature, carried where Google's OpenAI-compatible endpoint puts it (geminiResponses.ts).
    const google = isObject(call.extra_content) ? call.extra_content.google : undefined
    const signature = isObject(google) ? google.thought_signature : undefined
    return { id: call.id, name: fn.name, args, thoughtSignature: typeof signature === "string" && signature !== "" ? signature : undefined }
  })
}

export interface OpenaiFunctionTool {
  readonly name: string
  readonly description: string | undefined
  readonly parameters: Json | undefined
}

/** An OpenAI request's `tools`: function tools only (anything else cannot be translated), read the same for every format. */
export const openaiFunctionTools = (tools: unknown): Array<OpenaiFunctionTool> => {
  if (!Array.isArray(tools)) return untranslatable("tools", `"tools" must be an array`)
  return tools.map((tool, i) => {
    const fn = isObject(tool) ? tool.function : undefined
    if (!isObject(tool) || tool.type !== "function" || !isObject(fn) || typeof fn.name !== "string") {
      return untranslatable(`tools[${i}]`, "only function tools can be translated")
    }
    return {
      name: fn.name,
      description: typeof fn.description === "string" ? fn.description : undefined,
      parameters: isObject(fn.parameters) ? fn.parameters : undefined
    }
  })
}
