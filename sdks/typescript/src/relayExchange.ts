/**
 * One private relay exchange over HTTP, shared by `client.fetch` and the local proxy: the request the gateway gets for
 * a prepared call (tokenised and attested by prepareCall), and the gateway's answer with this call's originals
 * restored, the JSON body at once or a stream frame by frame (aliases cut across chunks included). Answers that are not
 * 2xx carry no user content and come back unchanged, for the caller to shape.
 */
import { detokeniseResponseText } from "./client/detokeniseResponse.ts"
import type { PreparedCall } from "./engine.ts"
import { createSseDetokeniser, serialiseEvent, type SseEvent, type StreamRoute } from "./sseDetokeniser.ts"
import type { AliasMap } from "./tokeniser/types.ts"
import type { AttestationRoute } from "./wire/attestation/v3.ts"

/** The gateway's path of each relay route. */
export const RELAY_PATHS: Readonly<Record<AttestationRoute, string>> = {
  "chat.completions": "/api/v1/chat/completions",
  messages: "/api/v1/messages",
  embeddings: "/api/v1/embeddings",
  responses: "/api/v1/responses",
  "messages.count_tokens": "/api/v1/messages/count_tokens"
}

/** `stream: true` on a route that streams (embeddings and token counting never do). */
export const isStreamed = (route: AttestationRoute, body: unknown): boolean =>
  route !== "embeddings" && route !== "messages.count_tokens" && typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true

/**
 * The gateway request of a prepared call: only the tokenised bytes, with the engine and attestation headers and the
 * gateway key (none when a server between this client and the gateway adds it). `headers` adds tracing or
 * idempotency headers (never credentials: the key is this client's).
 */
export const relayRequestInit = (
  prepared: PreparedCall,
  options: { readonly apiKey: string | undefined; readonly stream: boolean; readonly headers?: Readonly<Record<string, string>>; readonly signal?: AbortSignal }
): RequestInit => ({
  method: "POST",
  headers: {
    ...options.headers,
    "content-type": "application/json",
    accept: options.stream ? "text/event-stream" : "application/json",
    ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
    ...prepared.headers
  },
  body: prepared.bodyBytes as Uint8Array<ArrayBuffer>,
  redirect: "error",
  ...(options.signal === undefined ? {} : { signal: options.signal })
})

/**
 * The gateway's answer with the originals of `map` restored: a 2xx JSON body at once, a 2xx stream as it arrives. The
 * body's length and encoding headers are dropped (the restored body has its own). Other answers are returned as they
 * are. A malformed stream errors the returned body.
 */
export const restoredAnswer = async (route: AttestationRoute, map: AliasMap, response: Response, stream: boolean): Promise<Response> => {
  if (!response.ok) return response
  const headers = new Headers(response.headers)
  headers.delete("content-length")
  headers.delete("content-encoding")
  const init = { status: response.status, statusText: response.statusText, headers }
  if (stream && response.body !== null) return new Response(restoredStream(route, map, response.body), init)
  return new Response(restoredText(await response.text(), map), init)
}

/**
 * The body of a 2xx JSON answer with the originals of `map` restored (restoredAnswer's, for a caller that holds the
 * text and not a Response: the local proxy, which reads its gateway without WHATWG objects).
 */
export const restoredText = (text: string, map: AliasMap): string => detokeniseResponseText(text, map)

/** A 2xx event stream with the originals of `map` restored frame by frame (restoredAnswer's, for a bare stream). */
export const restoredStream = (route: AttestationRoute, map: AliasMap, upstream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> =>
  detokenisedSse(route as StreamRoute, map, upstream)

/**
 * The receipt frame of a Responses stream as its clients can take it. The Responses stream has no `[DONE]`, so its
 * clients read the gateway's trailer (`event: receipt-v2`, whose data is the bare envelope) as one more event, and
 * the official ones fail on it: the `openai` package's `responses.stream()` throws on an event type it does not know,
 * the Vercel AI SDK reports a chunk without `type` as an error. Here it keeps its event name and carries the envelope,
 * byte for byte, as `receipt` of a `keepalive` event, which both ignore, as they ignore OpenAI's own keep-alives.
 */
export const responsesReceiptFrame = (envelopeJson: string): string =>
  `event: receipt-v2\ndata: {"type":"keepalive","receipt":${envelopeJson}}\n\n`

/**
 * The gateway's SSE with originals restored frame by frame; the `receipt-v2` trailer passes unchanged (on the
 * Responses route re-framed for its clients, responsesReceiptFrame).
 */
export const detokenisedSse = (route: StreamRoute, map: AliasMap, upstream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
  const sse = createSseDetokeniser(route, map)
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  const serialise = (e: SseEvent) => (route === "responses" && e.event === "receipt-v2" ? responsesReceiptFrame(e.data) : serialiseEvent(e))
  const encode = (events: ReadonlyArray<SseEvent>) => encoder.encode(events.map(serialise).join(""))
  return upstream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        const out = sse.push(decoder.decode(chunk, { stream: true }))
        if (out.length > 0) controller.enqueue(encode(out))
      },
      flush: (controller) => {
        const out = [...sse.push(decoder.decode()), ...sse.end()]
        if (out.length > 0) controller.enqueue(encode(out))
      }
    })
  )
}
