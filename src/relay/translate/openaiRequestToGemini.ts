/**
 * An OpenAI chat completion request rewritten as a Gemini `generateContent` request (Google's native format,
 * https://ai.google.dev/api/generate-content), structurally: system and developer messages become
 * `systemInstruction`, turns become `contents` (`user` / `model`) of parts, tool calls become `functionCall` parts,
 * tool messages `functionResponse` parts, tools `functionDeclarations`, caps and sampling `generationConfig`. The
 * text inside is copied, never read. A field Gemini cannot express is refused (`UntranslatableField`), not dropped.
 * The model is named in the URL, and streaming is a different method, so neither travels in the body.
 */
import { DEFAULT_HOLD_OUTPUT_TOKENS } from "../../billing/pricing.ts"
import { openaiFunctionTools, openaiToolCalls } from "./openaiToolCalls.ts"
import { untranslatable } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** Sampling fields and their generationConfig names. */
const GENERATION = {
  temperature: "temperature",
  top_p: "topP",
  seed: "seed",
  presence_penalty: "presencePenalty",
  frequency_penalty: "frequencyPenalty"
} as const
/**
 * Handled below, or with no effect on the answer: `model` and `stream` travel in the URL, `stream_options` is the
 * gateway's business (Gemini always reports usage), `user` is an abuse-tracking id Gemini has no field for.
 */
const HANDLED = new Set([
  "model", "messages", "stream", "stream_options", "user", "n", "max_tokens", "max_completion_tokens", "stop", "tools",
  "tool_choice", "parallel_tool_calls", "response_format", ...Object.keys(GENERATION)
])

const textParts = (content: unknown, path: string, allowImages: boolean): Array<Json> => {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }]
  if (content === null || content === undefined) return []
  if (!Array.isArray(content)) return untranslatable(path, `"content" must be a string or an array of parts`)
  return content.map((part, i) => {
    const p = `${path}[${i}]`
    if (!isObject(part)) return untranslatable(p, "a content part must be an object")
    if (part.type === "text" && typeof part.text === "string") return { text: part.text }
    if (part.type === "image_url" && allowImages) {
      const url = isObject(part.image_url) ? part.image_url.url : undefined
      const m = typeof url === "string" ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null
      // Gemini reads remote files only from its Files API (fileData.fileUri), not from an arbitrary URL.
      if (m === null) return untranslatable(`${p}.image_url.url`, "only data: URL images can be translated to the Gemini format")
      return { inlineData: { mimeType: m[1], data: m[2] } }
    }
    return untranslatable(`${p}.type`, `content part type "${String(part.type).slice(0, 32)}" has no Gemini counterpart here`)
  })
}

const functionCallParts = (toolCalls: unknown, path: string, names: Map<string, string>): Array<Json> =>
  openaiToolCalls(toolCalls, path).map(({ id, name, args, thoughtSignature }) => {
    names.set(id, name)
    return { functionCall: { id, name, args }, ...(thoughtSignature === undefined ? {} : { thoughtSignature }) }
  })

/** A tool message: Gemini wants the function's name (from the assistant turn that called it) and an object. */
const functionResponsePart = (m: Json, path: string, names: ReadonlyMap<string, string>): Json => {
  if (typeof m.tool_call_id !== "string") return untranslatable(`${path}.tool_call_id`, `"tool_call_id" must be a string`)
  const name = names.get(m.tool_call_id)
  if (name === undefined) {
    return untranslatable(`${path}.tool_call_id`, "a tool result must answer a tool call of an earlier assistant message to be translated")
  }
  const text = textParts(m.content, `${path}.content`, false).map((p) => p.text as string).join("\n")
  return { functionResponse: { id: m.tool_call_id, name, response: { content: text } } }
}

const toolsOf = (tools: unknown): Array<Json> => {
  const declarations = openaiFunctionTools(tools).map(({ name, description, parameters }) => ({
    name,
    ...(description !== undefined ? { description } : {}),
    // JSON Schema as given (Gemini's `parameters` takes only an OpenAPI subset; `parametersJsonSchema` takes it whole).
    ...(parameters !== undefined ? { parametersJsonSchema: parameters } : {})
  }))
  return declarations.length === 0 ? [] : [{ functionDeclarations: declarations }]
}

const toolConfigOf = (choice: unknown): Json | undefined => {
  if (choice === undefined || choice === null) return undefined
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } }
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } }
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } }
  if (isObject(choice) && choice.type === "function" && isObject(choice.function) && typeof choice.function.name === "string") {
    return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.function.name] } }
  }
  return untranslatable("tool_choice", `"tool_choice" has no Gemini counterpart`)
}

const responseFormatOf = (format: unknown): Json => {
  if (format === undefined || format === null) return {}
  if (isObject(format) && format.type === "text") return {}
  if (isObject(format) && format.type === "json_object") return { responseMimeType: "application/json" }
  if (isObject(format) && format.type === "json_schema" && isObject(format.json_schema) && isObject(format.json_schema.schema)) {
    return { responseMimeType: "application/json", responseJsonSchema: format.json_schema.schema }
  }
  return untranslatable("response_format", `"response_format" has no Gemini counterpart`)
}

export const openaiRequestToGemini = (body: Json): Json => {
  for (const key of Object.keys(body)) {
    if (!HANDLED.has(key)) untranslatable(key, `"${key.slice(0, 64)}" has no Gemini counterpart`)
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) untranslatable("n", `"n" other than 1 cannot be translated`)
  // Gemini has no switch for one tool call per turn: refusing beats a different answer than asked for.
  if (body.parallel_tool_calls === false) untranslatable("parallel_tool_calls", `"parallel_tool_calls": false has no Gemini counterpart`)

  const system: Array<Json> = []
  const contents: Array<{ role: "user" | "model"; parts: Array<Json> }> = []
  /** Tool call ids of earlier assistant turns -> function names (a functionResponse names its function). */
  const names = new Map<string, string>()
  /** Consecutive turns of one role are merged: parallel function results travel in one content. */
  const append = (role: "user" | "model", parts: Array<Json>) => {
    if (parts.length === 0) return
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === role) last.parts.push(...parts)
    else contents.push({ role, parts })
  }
  const list = body.messages as Array<Json>
  list.forEach((m, i) => {
    const path = `messages[${i}]`
    switch (m.role) {
      case "system":
      case "developer":
        system.push(...textParts(m.content, `${path}.content`, false))
        return
      case "user":
        return append("user", textParts(m.content, `${path}.content`, true))
      case "assistant":
        return append("model", [...textParts(m.content, `${path}.content`, false), ...functionCallParts(m.tool_calls, `${path}.tool_calls`, names)])
      case "tool":
        return append("user", [functionResponsePart(m, path, names)])
      default:
        return untranslatable(`${path}.role`, `role "${String(m.role).slice(0, 32)}" has no Gemini counterpart`)
    }
  })

  const generationConfig: Json = {
    // The balance hold assumes this cap when the client sets none (as for the other translations).
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_HOLD_OUTPUT_TOKENS
  }
  for (const [from, to] of Object.entries(GENERATION)) if (body[from] !== undefined && body[from] !== null) generationConfig[to] = body[from]
  if (typeof body.stop === "string") generationConfig.stopSequences = [body.stop]
  else if (Array.isArray(body.stop) && body.stop.length > 0) generationConfig.stopSequences = body.stop
  Object.assign(generationConfig, responseFormatOf(body.response_format))

  const out: Json = { contents }
  if (system.length > 0) out.systemInstruction = { parts: system }
  if (body.tools !== undefined && body.tools !== null) {
    const tools = toolsOf(body.tools)
    if (tools.length > 0) out.tools = tools
  }
  const toolConfig = toolConfigOf(body.tool_choice)
  if (toolConfig !== undefined) out.toolConfig = toolConfig
  out.generationConfig = generationConfig
  return out
}
