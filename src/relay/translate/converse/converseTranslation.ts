/**
 * The OpenAI and Anthropic conversation routes served by Amazon Bedrock's Converse API: the request rewritten as a
 * Converse body (an OpenAI body through its Anthropic form, whose message model Converse shares), the answer and
 * the event stream rewritten back into the client's format. The model id and the choice of streaming travel in the
 * URL (`converseUrl`).
 */
import { anthropicStreamToOpenai } from "../anthropicStreamToOpenai.ts"
import { openaiRequestToAnthropic } from "../openaiRequestToAnthropic.ts"
import { anthropicResponseToOpenai } from "../responses.ts"
import { chunkByChunk, type StreamTranslator } from "../streamTranslator.ts"
import { MalformedUpstream, untranslatable } from "../translationError.ts"
import { anthropicRequestToConverse } from "./anthropicRequestToConverse.ts"
import { converseResponseToAnthropic } from "./converseResponseToAnthropic.ts"
import { converseStreamToAnthropic } from "./converseStreamToAnthropic.ts"
import { createEventStreamReader } from "./eventStreamReader.ts"

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** The Converse or ConverseStream URL of a model (the id percent-encoded once; SigV4 encodes the path again). */
export const converseUrl = (origin: string, modelId: string, stream: boolean): string =>
  `${origin}/model/${encodeURIComponent(modelId)}/${stream ? "converse-stream" : "converse"}`

const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,/

/**
 * What an OpenAI body asks for that Converse cannot do, refused under the client's own field names (the Anthropic
 * form in between would name other paths).
 */
const refuseOpenaiOnlyFields = (body: Json) => {
  if (body.parallel_tool_calls === false) untranslatable("parallel_tool_calls", "Amazon Bedrock Converse cannot switch off parallel tool calls")
  if (!Array.isArray(body.messages)) return
  body.messages.forEach((m, i) => {
    if (!isObject(m) || !Array.isArray(m.content)) return
    m.content.forEach((part, j) => {
      if (!isObject(part) || part.type !== "image_url") return
      const url = isObject(part.image_url) ? part.image_url.url : undefined
      if (typeof url === "string" && !DATA_IMAGE.test(url)) {
        untranslatable(`messages[${i}].content[${j}].image_url.url`, "Amazon Bedrock takes png, jpeg, gif or webp images as base64 data: URLs only (it cannot fetch image URLs)")
      }
    })
  })
}

export const openaiRequestToConverse = (body: Json, model: string): Json => {
  refuseOpenaiOnlyFields(body)
  return anthropicRequestToConverse(openaiRequestToAnthropic(body, model))
}

/** Bedrock names no answer id; its request id (`x-amzn-requestid`) is the one to quote to AWS. */
export const converseAnswerId = (headers: Readonly<Record<string, unknown>> | undefined): string => {
  const v = headers?.["x-amzn-requestid"]
  const id = Array.isArray(v) ? v[0] : v
  return typeof id === "string" && /^[\w-]{1,128}$/.test(id) ? `msg_bdrk_${id}` : `msg_bdrk_${crypto.randomUUID()}`
}

export const converseResponseToClient = (client: "openai" | "anthropic", answer: unknown, meta: { readonly id: string; readonly model: string }, nowSeconds: number): Json => {
  const message = converseResponseToAnthropic(answer, meta)
  return client === "anthropic" ? message : anthropicResponseToOpenai(message, nowSeconds)
}

export const converseStreamToClient = (
  client: "openai" | "anthropic",
  meta: { readonly id: string; readonly model: string },
  options: { readonly includeUsage: boolean; readonly nowSeconds: number }
): Required<StreamTranslator> => {
  const frames = createEventStreamReader()
  const anthropic = converseStreamToAnthropic(meta)
  const openai = client === "openai" ? anthropicStreamToOpenai(options) : undefined
  // A bad frame after good ones in the same chunk: the good ones are handed over first, the failure next time.
  const inChunk = chunkByChunk()
  return {
    // Upstream event-stream bytes in (the decoded text is of no use for a binary framing), the client's SSE out.
    push: (_text, chunk) => {
      if (chunk === undefined) throw new MalformedUpstream("an event stream needs its bytes")
      return inChunk((emit) => {
        for (const message of frames.push(chunk)) {
          const text = anthropic.push(message)
          emit(openai === undefined ? text : openai.push(text))
        }
      })
    },
    complete: () => anthropic.complete() && (openai === undefined || openai.complete()),
    // Converse's own counts, from its closing metadata event.
    usage: () => anthropic.usage()
  }
}
