/**
 * What the local proxy refuses in an OpenAI Responses request before tokenising it (interim, until the egress policy,
 * sdks/vectors/egress-policy.json, classifies every field of the `responses` route): the fields whose text the
 * tokeniser does not walk, and the one field a stateless proxy cannot serve.
 *
 * - `previous_response_id` / `conversation`: the provider would answer from a conversation it stored earlier, whose
 *   aliases this request's map does not hold; the proxy keeps nothing between requests, so it could not restore them.
 *   The client sends the whole conversation as `input` instead (the official SDKs and the AI SDK do by default).
 * - `prompt` (a stored prompt template with variables): its variables' text would go out untokenised.
 * - input items other than messages, function calls and their outputs, reasoning items (summaries only) and item
 *   references; content parts other than text and images; `input_file` parts (415: files are read on the device on the
 *   chat route, not yet here).
 *
 * Refusals are `unsupported_field` (400) or `unsupported_content` (415) with `details.path`, a JSON pointer, as the
 * egress policy's are (DESIGN.md section 10). Nothing is sent.
 */
export interface ResponsesRefusal {
  readonly status: 400 | 415
  readonly code: "unsupported_field" | "unsupported_content"
  readonly message: string
  readonly path: string
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const ITEM_TYPES: ReadonlySet<string> = new Set(["message", "function_call", "function_call_output", "reasoning", "item_reference"])
const PART_TYPES: ReadonlySet<string> = new Set(["input_text", "output_text", "text", "input_image"])

const field = (path: string, message: string): ResponsesRefusal => ({ status: 400, code: "unsupported_field", message, path })

const partsRefusal = (parts: unknown, at: string): ResponsesRefusal | undefined => {
  if (!Array.isArray(parts)) return undefined
  for (let j = 0; j < parts.length; j++) {
    const type = isObject(parts[j]) ? parts[j].type : undefined
    if (type === "input_file") {
      return {
        status: 415,
        code: "unsupported_content",
        message: "input_file parts are not sent by the local proxy yet (their text would leave the device untokenised); send the file's text as input_text, or attach it on /v1/chat/completions, where files are read on this device.",
        path: `${at}/${j}`
      }
    }
    if (typeof type !== "string" || !PART_TYPES.has(type)) {
      return field(`${at}/${j}/type`, `content parts of type ${JSON.stringify(type)} are not sent by the local proxy (only input_text, output_text, text and input_image); nothing was sent.`)
    }
  }
  return undefined
}

export const responsesRefusal = (body: unknown): ResponsesRefusal | undefined => {
  if (!isObject(body)) return undefined
  for (const name of ["previous_response_id", "conversation"]) {
    if (body[name] !== undefined && body[name] !== null) {
      return field(
        `/${name}`,
        `${name} is not supported by the local proxy: it keeps nothing between requests, so it could not restore the personal data of the earlier turns the provider would answer from. Send the whole conversation as input (with store: false); nothing was sent.`
      )
    }
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    return field("/prompt", "stored prompt templates (prompt) are not sent by the local proxy: their variables would leave the device untokenised. Put the text in instructions or input; nothing was sent.")
  }
  if (!Array.isArray(body.input)) return undefined
  for (let i = 0; i < body.input.length; i++) {
    const item = body.input[i]
    if (!isObject(item)) continue
    const at = `/input/${i}`
    const type = item.type ?? "message"
    if (typeof type !== "string" || !ITEM_TYPES.has(type)) {
      return field(`${at}/type`, `input items of type ${JSON.stringify(type)} are not sent by the local proxy (messages, function calls and their outputs, reasoning and item references are); nothing was sent.`)
    }
    if (type === "message") {
      const refusal = partsRefusal(item.content, `${at}/content`)
      if (refusal !== undefined) return refusal
    }
    if (type === "function_call_output") {
      const refusal = partsRefusal(item.output, `${at}/output`)
      if (refusal !== undefined) return refusal
    }
    if (type === "reasoning" && item.content !== undefined && item.content !== null) {
      return field(`${at}/content`, "reasoning items are sent back with their summary only (their content would leave the device untokenised); nothing was sent.")
    }
  }
  return undefined
}
