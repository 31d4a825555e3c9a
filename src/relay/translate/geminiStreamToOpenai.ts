/**
 * Gemini `streamGenerateContent?alt=sse` frames (each `data:` a whole `GenerateContentResponse` with the next piece
 * of the answer; https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent) rewritten as
 * OpenAI `chat.completion.chunk` frames: the first frame opens the assistant turn, text parts become content deltas,
 * each function call (Gemini sends it whole) one tool-call delta, and the frame with a `finishReason` ends the answer
 * with the finish chunk, a usage chunk when the client asked for one, and `data: [DONE]`. Gemini has no end-of-stream
 * event of its own: a stream closed before a finish reason is incomplete. Usage (cumulative in every frame) is kept
 * for metering. The text is copied, never read.
 */
import type { UpstreamUsage } from "../usage.ts"
import { candidatePieces, geminiUsage, thoughtSignatureField, toolCallId } from "./geminiResponses.ts"
import { createSseEventReader } from "./sseEvents.ts"
import { geminiFinishToOpenaiFinish } from "./stopReasons.ts"
import { chunkByChunk, type StreamTranslator } from "./streamTranslator.ts"
import { MalformedUpstream } from "./translationError.ts"

type Json = Record<string, unknown>

export const geminiStreamToOpenai = (
  options: { readonly includeUsage: boolean; readonly nowSeconds: number; readonly upstreamModel: string }
): StreamTranslator => {
  const events = createSseEventReader()
  let id = ""
  let model = options.upstreamModel
  let started = false
  let toolCalls = 0
  let done = false
  let usage: UpstreamUsage = { responseId: undefined, inputTokens: undefined, outputTokens: undefined }

  const chunk = (choices: Array<unknown>, extra: Json = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: options.nowSeconds, model, choices, ...extra })}\n\n`
  const delta = (d: Json, finishReason: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finishReason }])

  const onFrame = (frame: Json): string => {
    const frameUsage = geminiUsage(frame)
    usage = {
      responseId: usage.responseId ?? frameUsage.responseId,
      inputTokens: frameUsage.inputTokens ?? usage.inputTokens,
      outputTokens: frameUsage.outputTokens ?? usage.outputTokens
    }
    if (done) return ""
    const pieces = candidatePieces(frame)
    let out = ""
    if (!started) {
      started = true
      id = typeof frame.responseId === "string" ? frame.responseId : ""
      if (typeof frame.modelVersion === "string") model = frame.modelVersion
      out += delta({ role: "assistant", content: "" })
    }
    if (pieces.text !== "") out += delta({ content: pieces.text })
    for (const call of pieces.functionCalls) {
      const index = toolCalls++
      out += delta({
        tool_calls: [{ index, id: toolCallId(call, id, index), type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) }, ...thoughtSignatureField(call.thoughtSignature) }]
      })
    }
    if (pieces.finishReason !== undefined && pieces.finishReason !== null) {
      done = true
      out += delta({}, geminiFinishToOpenaiFinish(pieces.finishReason, toolCalls > 0))
      if (options.includeUsage) {
        const prompt = usage.inputTokens ?? 0
        const completion = usage.outputTokens ?? 0
        out += chunk([], { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })
      }
      out += "data: [DONE]\n\n"
    }
    return out
  }

  const inChunk = chunkByChunk()
  return {
    push: (text) =>
      inChunk((emit) => {
        for (const e of events.push(text)) {
          let frame: unknown
          try {
            frame = JSON.parse(e.data)
          } catch {
            throw new MalformedUpstream("stream frame is not JSON")
          }
          if (typeof frame !== "object" || frame === null || Array.isArray(frame)) throw new MalformedUpstream("stream frame is not an object")
          emit(onFrame(frame as Json))
        }
      }),
    complete: () => done,
    usage: () => usage
  }
}
