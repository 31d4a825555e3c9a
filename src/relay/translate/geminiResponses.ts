/**
 * Gemini `GenerateContentResponse`s (https://ai.google.dev/api/generate-content#generatecontentresponse) read
 * structurally: the first candidate's parts (text, and `functionCall`s as OpenAI tool calls), its finish reason, and
 * `usageMetadata` for metering. Thought parts (`thought: true`) are the model's reasoning summary, not its answer,
 * and are left out. The text is copied, never read.
 */
import type { UpstreamUsage } from "../usage.ts"
import { geminiFinishToOpenaiFinish } from "./stopReasons.ts"
import { MalformedUpstream } from "./translationError.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)
const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined)

/**
 * Tokens billed: the prompt (cached content included, as Gemini counts it), and the answer with its thinking
 * (Gemini reports thoughts apart from candidates and bills both as output).
 */
export const geminiUsage = (response: unknown): UpstreamUsage => {
  const r = isObject(response) ? response : {}
  const u = isObject(r.usageMetadata) ? r.usageMetadata : undefined
  const candidates = count(u?.candidatesTokenCount)
  const thoughts = count(u?.thoughtsTokenCount)
  return {
    responseId: typeof r.responseId === "string" ? r.responseId : undefined,
    inputTokens: count(u?.promptTokenCount),
    outputTokens: candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0)
  }
}

/** An OpenAI tool call id for a Gemini function call: Gemini's own when it sent one, else one from the response. */
export const toolCallId = (call: { readonly id: unknown }, responseId: string, index: number): string =>
  typeof call.id === "string" && call.id !== "" ? call.id : `call_${responseId === "" ? "gemini" : responseId}_${index}`

/** A function call of a Gemini answer; `thoughtSignature` is the opaque token a thinking model attaches to it. */
export interface GeminiFunctionCall {
  readonly name: string
  readonly args: unknown
  readonly id: unknown
  readonly thoughtSignature: string | undefined
}

export interface GeminiPieces {
  readonly text: string
  readonly sawText: boolean
  readonly functionCalls: ReadonlyArray<GeminiFunctionCall>
}

/**
 * Where an OpenAI-format tool call carries Gemini's thought signature: `extra_content.google.thought_signature`, the
 * field Google's own OpenAI-compatible endpoint uses. Thinking models want it back on the call in the next turn
 * (Gemini 3 refuses a function-calling history without it; 2.5 reasons worse). Clients that keep the assistant
 * message as they got it send it back unchanged.
 */
export const thoughtSignatureField = (signature: string | undefined): Json =>
  signature === undefined ? {} : { extra_content: { google: { thought_signature: signature } } }

/** Text and function calls of one response's first candidate. Throws `MalformedUpstream` on a shape it cannot read. */
export const candidatePieces = (response: Json): GeminiPieces & { readonly finishReason: unknown; readonly blocked: boolean } => {
  if (response.error !== undefined) throw new MalformedUpstream("provider error in the answer")
  const candidates = response.candidates
  if (candidates === undefined) {
    // A prompt blocked by Gemini's safety filters has feedback and no candidates.
    if (isObject(response.promptFeedback) && typeof response.promptFeedback.blockReason === "string") {
      return { text: "", sawText: false, functionCalls: [], finishReason: "SAFETY", blocked: true }
    }
    // A stream frame carrying only usage.
    if (isObject(response.usageMetadata)) return { text: "", sawText: false, functionCalls: [], finishReason: undefined, blocked: false }
    throw new MalformedUpstream("not a Gemini response")
  }
  if (!Array.isArray(candidates)) throw new MalformedUpstream("candidates is not an array")
  const first = candidates[0]
  if (first === undefined) return { text: "", sawText: false, functionCalls: [], finishReason: undefined, blocked: false }
  if (!isObject(first)) throw new MalformedUpstream("candidate is not an object")
  const content = first.content
  const parts = isObject(content) ? content.parts : undefined
  if (content !== undefined && !isObject(content)) throw new MalformedUpstream("content is not an object")
  if (parts !== undefined && !Array.isArray(parts)) throw new MalformedUpstream("parts is not an array")
  let text = ""
  let sawText = false
  const functionCalls: Array<GeminiFunctionCall> = []
  for (const part of (parts ?? []) as Array<unknown>) {
    if (!isObject(part)) throw new MalformedUpstream("part is not an object")
    if (part.thought === true) continue
    if (typeof part.text === "string") {
      text += part.text
      sawText = true
    } else if (part.functionCall !== undefined) {
      const call = part.functionCall
      if (!isObject(call) || typeof call.name !== "string") throw new MalformedUpstream("function call without a name")
      if (call.args !== undefined && !isObject(call.args)) throw new MalformedUpstream("function call arguments are not an object")
      const thoughtSignature = typeof part.thoughtSignature === "string" && part.thoughtSignature !== "" ? part.thoughtSignature : undefined
      functionCalls.push({ name: call.name, args: call.args ?? {}, id: call.id, thoughtSignature })
    }
    // inlineData, executableCode, ... have no place in a chat completion message
  }
  return { text, sawText, functionCalls, finishReason: first.finishReason, blocked: false }
}

export const geminiResponseToOpenai = (answer: unknown, upstreamModel: string, nowSeconds: number): Json => {
  if (!isObject(answer)) throw new MalformedUpstream("not a Gemini response")
  const pieces = candidatePieces(answer)
  if (!pieces.blocked && (!Array.isArray(answer.candidates) || answer.candidates.length === 0)) {
    throw new MalformedUpstream("a Gemini response without candidates")
  }
  const responseId = typeof answer.responseId === "string" ? answer.responseId : ""
  const toolCalls = pieces.functionCalls.map((call, i) => ({
    id: toolCallId(call, responseId, i),
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.args) },
    ...thoughtSignatureField(call.thoughtSignature)
  }))
  const usage = geminiUsage(answer)
  const prompt = usage.inputTokens ?? 0
  const completion = usage.outputTokens ?? 0
  return {
    id: responseId,
    object: "chat.completion",
    created: nowSeconds,
    model: typeof answer.modelVersion === "string" ? answer.modelVersion : upstreamModel,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: pieces.sawText || toolCalls.length === 0 ? pieces.text : null,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        refusal: null
      },
      logprobs: null,
      finish_reason: geminiFinishToOpenaiFinish(pieces.finishReason, toolCalls.length > 0)
    }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  }
}
