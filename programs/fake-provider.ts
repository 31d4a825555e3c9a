/**
 * Fake upstream LLM provider: a real HTTP server speaking the OpenAI chat-completions / Responses / embeddings /
 * models format, the Anthropic messages (and count_tokens) format and Google Gemini's native generateContent /
 * streamGenerateContent (`alt=sse` only, key required in `x-goog-api-key`), with deterministic bodies derived from
 * the request.
 * Tests, benchmarks and the offline quickstart (`LOCAL_PROVIDER_URL`) relay to it.
 *
 * Plain `node:http` on purpose: the benchmark uses it as the "direct" baseline, so it must add as
 * little overhead as possible.
 *
 * Replies: the assistant text is always `Echo: <last user message text>` (text parts joined with "\n"),
 * so end-to-end tests can check that tokens survived the round trip. With `tools` in the request, the reply is a
 * call of the first tool with arguments `{"text": <last user message text>}` (OpenAI `tool_calls`, Anthropic
 * `tool_use`, Gemini `functionCall`, Responses `function_call` item), unless the last turn is a tool result: then the
 * text is `Echo: <the tool result's text>` (a Gemini functionResponse's `response.content`, or its JSON; a Responses
 * `function_call_output`'s output). Usage: prompt/input tokens =
 * ceil(request body bytes / 4); completion/output tokens = number of whitespace-separated words of
 * the reply. Both are exported (`fakeReplyText`, `fakePromptTokens`, `fakeCompletionTokens`) so
 * tests compute expectations instead of hard-coding them.
 *
 * OpenAI Responses (`POST /v1/responses`): the Response object, or with `stream: true` its named SSE events
 * (`event: response.created` ... `response.output_text.delta` / `response.function_call_arguments.delta` ...
 * `response.completed`, each with a `sequence_number`), as OpenAI sends them, without `[DONE]`. A request whose
 * `metadata.fake_unknown_event` names an event type gets one event of that type (carrying the reply text) before
 * `response.completed`, for tests of clients that must pass on events they do not know. Through a client the value
 * arrives as its end-user alias (metadata values are identifiers to the egress policy), so any value that is not an
 * event name (`response.*`) stands for `response.novel_thing`.
 * Anthropic token counting (`POST /v1/messages/count_tokens`): `{ "input_tokens": ceil(body bytes / 4) }`.
 *
 * Error injection, strongest first (the first one that names an outcome wins; delays add up):
 *   1. request headers `x-fake-status: 500`, `x-fake-delay-ms: 200`, `x-fake-hang: 1`,
 *      `x-fake-cut-after: 2`. The gateway does not forward arbitrary client headers, so these only
 *      work when calling the fake provider directly;
 *   2. the model name: `fail-500` / `fail-429` (any `fail-<status>`) answers that status,
 *      `slow-<ms>` delays, `hang` never answers, `cut-<n>` cuts the stream after n SSE frames
 *      (a non-stream body is cut halfway); any other model answers normally;
 *   3. `setBehaviour(...)` in-process, or `POST /_fake/behaviour` with the Behaviour JSON.
 *
 * Amazon Bedrock Runtime: `POST /model/{modelId}/converse` and `/converse-stream` (AWS event-stream frames), with the
 * SigV4 signature checked by signing again (programs/fakeBedrock.ts; a bad signature is 403 as on AWS). The model id
 * in the path plays the model name's part in error injection; `bad-frame` corrupts one event-stream frame.
 *
 * Control endpoints for cross-process tests (never recorded, never counted as open requests):
 *   `GET /_fake/received` -> `{count, total_since_reset, requests:[{method, path, headers, body (utf8), at}]}`,
 *   `POST /_fake/reset`, `GET /_fake/open` -> `{open}`, `POST /_fake/behaviour` (body: a Behaviour).
 * As a program only the most recent 10 000 requests are kept, so benchmarks do not grow memory.
 *
 * Run: `npx node programs/fake-provider.ts [--host H] [--port N] [--delay-ms N] [--chunk-delay-ms N] [--stream-piece-chars N]`.
 * Environment (flags win): FAKE_PROVIDER_HOST / FAKE_PROVIDER_PORT, else HOST / PORT; default
 * 127.0.0.1:8788. The FAKE_PROVIDER_* names win over HOST/PORT so one shared environment can start
 * both the gateway and the fake provider.
 */
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { parseArgs } from "node:util"
import { FAKE_PROVIDER_SETTINGS } from "../src/config/gatewaySettings.ts"
import { readSettings } from "../sdks/typescript/src/wire/config/setting.ts"
import { stopWithParent } from "../sdks/typescript/src/wire/node/stopWithParent.ts"
import {
  bedrockErrorType,
  bedrockRouteOf,
  converseAnswer,
  converseStreamFrames,
  corruptFrame,
  fakeConverseTurn,
  verifyBedrockSignature
} from "./fakeBedrock.ts"

export interface FakeProviderOptions {
  host?: string
  /** 0 = ephemeral */
  port?: number
  /** added before every answer */
  delayMs?: number
  /** pause between SSE frames */
  chunkDelayMs?: number
  /** stream replies in pieces of this many characters instead of word by word (cuts aliases across frames) */
  streamPieceChars?: number
  /** keep only the most recent N recorded requests (default: all; the program keeps 10 000) */
  maxRecorded?: number
}

export interface RecordedRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  /** the exact raw body bytes */
  body: Buffer
  /** Date.now() when the body had been fully received */
  at: number
}

export type Behaviour =
  | { kind: "normal" }
  | { kind: "status"; status: number; body?: unknown }
  /** never answers: for timeouts */
  | { kind: "hang" }
  /** SSE: destroy the socket after N frames (non-stream bodies are cut halfway) */
  | { kind: "cut-stream"; afterChunks: number }
  /** SSE: send N frames, then nothing more while keeping the connection open (a provider stalling mid-answer) */
  | { kind: "stall-stream"; afterChunks: number }
  | { kind: "delay"; ms: number }
  /** Bedrock event stream only: after N good frames, one whose CRC does not match (then the rest of the answer) */
  | { kind: "bad-frame"; afterChunks: number }

export interface FakeProvider {
  /** origin, no /v1, e.g. http://127.0.0.1:54321 */
  url: string
  /** every non-control request received, in order (oldest dropped beyond maxRecorded) */
  received: RecordedRequest[]
  /** requests currently in progress (control endpoints excluded) */
  openRequests(): number
  /** error injection for subsequent requests */
  setBehaviour(b: Behaviour): void
  /** clears received and behaviour */
  reset(): void
  close(): Promise<void>
}

export const FAKE_PROVIDER_DEFAULT_HOST = "127.0.0.1"
export const FAKE_PROVIDER_DEFAULT_PORT = 8788

export const FAKE_PROVIDER_MODELS: ReadonlyArray<string> = [
  "local-chat",
  "local-embed",
  "gpt-4o-mini",
  "text-embedding-3-small",
  "claude-3-5-haiku-latest",
  "fail-500",
  "fail-429",
  "slow-200",
  "hang",
  "cut-2"
]

export const EMBEDDING_DIMENSIONS = 8

// ---------------------------------------------------------------------------------------------
// Deterministic content (exported so tests compute expectations rather than hard-code them)
// ---------------------------------------------------------------------------------------------

export const fakeReplyText = (lastUserText: string): string => `Echo: ${lastUserText}`

export const fakePromptTokens = (bodyBytes: number): number => Math.ceil(bodyBytes / 4)

export const fakeCompletionTokens = (reply: string): number => reply.split(/\s+/).filter((w) => w.length > 0).length

/** 8 floats in [-1, 1) from SHA-256 of the input (a string as UTF-8, anything else as its JSON). */
export const fakeEmbedding = (input: unknown): number[] => {
  const digest = createHash("sha256")
    .update(typeof input === "string" ? input : JSON.stringify(input))
    .digest()
  const out: number[] = []
  for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) {
    // Rounded to what a float32 can carry so the float and base64 encodings decode to equal numbers.
    out.push(Math.fround((digest.readUInt32BE(i * 4) / 2 ** 32) * 2 - 1))
  }
  return out
}

/** Words keeping their trailing whitespace, so the frames concatenate back to the exact reply. */
const splitIntoWords = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [text]
const splitIntoPieces = (size: number) => (text: string): string[] => text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [text]

/** Text of a content field: a string, or an array of `{type:"text", text}` parts joined with "\n". */
const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content
      .filter((p): p is { type: string; text: string } =>
        typeof p === "object" && p !== null && (p as { type?: unknown }).type === "text" &&
        typeof (p as { text?: unknown }).text === "string"
      )
      .map((p) => p.text)
      .join("\n")
  }
  return ""
}

/** The first tool's name when the request offers tools (OpenAI `function.name` or Anthropic `name`). */
const firstToolName = (tools: unknown): string | undefined => {
  const t = Array.isArray(tools) ? (tools[0] as { name?: unknown; function?: { name?: unknown } } | undefined) : undefined
  const name = t?.function?.name ?? t?.name
  return typeof name === "string" ? name : undefined
}

/** The text of a trailing tool result: an OpenAI `tool` message, or `tool_result` blocks of the last Anthropic user turn. */
const trailingToolResult = (messages: unknown): string | undefined => {
  if (!Array.isArray(messages) || messages.length === 0) return undefined
  const last = messages[messages.length - 1] as { role?: unknown; content?: unknown } | null
  if (last === null || typeof last !== "object") return undefined
  if (last.role === "tool") return textOf(last.content)
  if (last.role === "user" && Array.isArray(last.content)) {
    const results = last.content.filter((b) => typeof b === "object" && b !== null && (b as { type?: unknown }).type === "tool_result")
    if (results.length > 0) return results.map((b) => textOf((b as { content?: unknown }).content)).join("\n")
  }
  return undefined
}

/** What the fake answers: a tool call when tools are offered and no tool result is being answered, else text. */
const fakeTurn = (body: Record<string, unknown>): { text: string } | { tool: string; args: string } => {
  const toolResult = trailingToolResult(body.messages)
  if (toolResult !== undefined) return { text: fakeReplyText(toolResult) }
  const tool = firstToolName(body.tools)
  if (tool !== undefined) return { tool, args: JSON.stringify({ text: lastUserText(body.messages) }) }
  return { text: fakeReplyText(lastUserText(body.messages)) }
}

const lastUserText = (messages: unknown): string => {
  if (!Array.isArray(messages)) return ""
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null
    if (m !== null && typeof m === "object" && m.role === "user") return textOf(m.content)
  }
  return ""
}

// ---------------------------------------------------------------------------------------------
// Injection plan
// ---------------------------------------------------------------------------------------------

type Outcome =
  | { kind: "normal" }
  | { kind: "status"; status: number; body?: unknown }
  | { kind: "hang" }
  | { kind: "cut-stream"; afterChunks: number }
  | { kind: "stall-stream"; afterChunks: number }
  | { kind: "bad-frame"; afterChunks: number }

interface Plan {
  delayMs: number
  outcome: Outcome | undefined
}

const headerString = (v: string | string[] | undefined): string | undefined => Array.isArray(v) ? v[0] : v

const nonNegativeInt = (s: string | undefined): number | undefined => {
  if (s === undefined || !/^\d+$/.test(s.trim())) return undefined
  return Number(s.trim())
}

/** Layers (strongest first) each contribute a delay and maybe an outcome; the first outcome wins. */
const combine = (layers: ReadonlyArray<Plan>, baseDelayMs: number): { delayMs: number; outcome: Outcome } => {
  let delayMs = baseDelayMs
  let outcome: Outcome | undefined
  for (const layer of layers) {
    delayMs += layer.delayMs
    if (outcome === undefined && layer.outcome !== undefined) outcome = layer.outcome
  }
  return { delayMs, outcome: outcome ?? { kind: "normal" } }
}

const planFromBehaviour = (b: Behaviour): Plan =>
  b.kind === "delay" ? { delayMs: b.ms, outcome: undefined } : b.kind === "normal"
  ? { delayMs: 0, outcome: undefined }
  : { delayMs: 0, outcome: b }

const planFromHeaders = (headers: IncomingMessage["headers"]): Plan => {
  const delayMs = nonNegativeInt(headerString(headers["x-fake-delay-ms"])) ?? 0
  const status = nonNegativeInt(headerString(headers["x-fake-status"]))
  const hang = headerString(headers["x-fake-hang"])
  const cut = nonNegativeInt(headerString(headers["x-fake-cut-after"]))
  let outcome: Outcome | undefined
  if (hang !== undefined && hang !== "" && hang !== "0" && hang !== "false") outcome = { kind: "hang" }
  else if (status !== undefined && status >= 100 && status <= 599) outcome = { kind: "status", status }
  else if (cut !== undefined) outcome = { kind: "cut-stream", afterChunks: cut }
  return { delayMs, outcome }
}

const planFromModel = (model: unknown): Plan => {
  if (typeof model !== "string") return { delayMs: 0, outcome: undefined }
  if (model === "hang") return { delayMs: 0, outcome: { kind: "hang" } }
  let m = /^fail-(\d{3})$/.exec(model)
  if (m) return { delayMs: 0, outcome: { kind: "status", status: Number(m[1]) } }
  m = /^slow-(\d+)$/.exec(model)
  if (m) return { delayMs: Number(m[1]), outcome: undefined }
  m = /^cut-(\d+)$/.exec(model)
  if (m) return { delayMs: 0, outcome: { kind: "cut-stream", afterChunks: Number(m[1]) } }
  return { delayMs: 0, outcome: undefined }
}

// ---------------------------------------------------------------------------------------------
// Response helpers
// ---------------------------------------------------------------------------------------------

type Dialect = "openai" | "anthropic" | "bedrock" | "gemini"

/** Google's RPC status names for the HTTP statuses the fake injects (https://ai.google.dev/gemini-api/docs/troubleshooting). */
const geminiStatus = (status: number): string =>
  status === 429 ? "RESOURCE_EXHAUSTED" : status === 403 ? "PERMISSION_DENIED" : status === 404 ? "NOT_FOUND" :
  status === 503 ? "UNAVAILABLE" : status === 504 ? "DEADLINE_EXCEEDED" : status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT"

const openAiErrorType = (status: number): string =>
  status === 429 ? "rate_limit_error" : status === 401 ? "authentication_error" : status >= 500 ? "server_error" :
  "invalid_request_error"

const anthropicErrorType = (status: number): string =>
  status === 429 ? "rate_limit_error" : status === 401 ? "authentication_error" : status === 529 ? "overloaded_error" :
  status >= 500 ? "api_error" : status === 404 ? "not_found_error" : "invalid_request_error"

const errorBody = (dialect: Dialect, status: number, message: string, code: string | null): unknown =>
  dialect === "bedrock"
    ? { message }
    : dialect === "anthropic"
    ? { type: "error", error: { type: anthropicErrorType(status), message } }
    : dialect === "gemini"
    ? { error: { code: status, message, status: geminiStatus(status) } }
    : { error: { message, type: openAiErrorType(status), param: null, code } }

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  const bytes = Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": bytes.length })
  res.end(bytes)
}

/** Writes half the body under a full content-length, then drops the connection. */
const sendCutJson = (res: ServerResponse, body: unknown): void => {
  const bytes = Buffer.from(JSON.stringify(body))
  res.writeHead(200, { "content-type": "application/json", "content-length": bytes.length })
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy())
}

const sleepUnlessClosed = (ms: number, res: ServerResponse, timers: Set<NodeJS.Timeout>): Promise<void> =>
  ms <= 0 ? Promise.resolve() : new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t)
      timers.delete(t)
      res.off("close", done)
      resolve()
    }
    const t = setTimeout(done, ms)
    timers.add(t)
    res.once("close", done)
  })

interface StreamWriter {
  /** false once the stream was cut or the client went away: stop producing frames */
  frame(text: string | Uint8Array): Promise<boolean>
  end(): void
}

const openSse = (
  res: ServerResponse,
  cutAfter: number | undefined,
  chunkDelayMs: number,
  timers: Set<NodeJS.Timeout>,
  stallAfter?: number,
  contentType = "text/event-stream"
): StreamWriter => {
  res.writeHead(200, { "content-type": contentType, "cache-control": "no-cache", connection: "keep-alive" })
  res.flushHeaders()
  let written = 0
  const cut = (): void => {
    res.destroy()
  }
  if (cutAfter === 0) cut()
  return {
    frame: async (text) => {
      if (res.destroyed) return false
      if (written > 0 && chunkDelayMs > 0) {
        await sleepUnlessClosed(chunkDelayMs, res, timers)
        if (res.destroyed) return false
      }
      if (stallAfter !== undefined && written >= stallAfter) return false
      written++
      if (cutAfter !== undefined && written >= cutAfter) {
        // Let the last frame reach the socket before tearing it down mid-stream.
        res.write(text, cut)
        return false
      }
      res.write(text)
      return true
    },
    end: () => {
      // A stalled stream stays open until the client or close() ends it.
      if (!res.destroyed && (stallAfter === undefined || written < stallAfter)) res.end()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

interface Ctx {
  res: ServerResponse
  /** the request path (Bedrock routes carry the model id in it) */
  path: string
  body: Record<string, unknown>
  bodyBytes: number
  outcome: Outcome
  seq: number
  chunkDelayMs: number
  /** how a streamed reply is cut into frames */
  pieces: (text: string) => string[]
  timers: Set<NodeJS.Timeout>
}

const cutAfterOf = (o: Outcome): number | undefined => o.kind === "cut-stream" ? o.afterChunks : undefined
const stallAfterOf = (o: Outcome): number | undefined => o.kind === "stall-stream" ? o.afterChunks : undefined

const chatCompletions = async (ctx: Ctx): Promise<void> => {
  const { res, body } = ctx
  const model = typeof body.model === "string" ? body.model : "local-chat"
  const turn = fakeTurn(body)
  const reply = "text" in turn ? turn.text : turn.args
  const toolCall = "tool" in turn ? { id: `call_fake_${ctx.seq}`, type: "function", function: { name: turn.tool, arguments: turn.args } } : undefined
  const id = `chatcmpl-fake-${ctx.seq}`
  const created = Math.floor(Date.now() / 1000)
  const promptTokens = fakePromptTokens(ctx.bodyBytes)
  const completionTokens = fakeCompletionTokens(reply)
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens }

  if (body.stream !== true) {
    const out = {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{
        index: 0,
        message: toolCall === undefined ? { role: "assistant", content: reply } : { role: "assistant", content: null, tool_calls: [toolCall] },
        logprobs: null,
        finish_reason: toolCall === undefined ? "stop" : "tool_calls"
      }],
      usage
    }
    if (ctx.outcome.kind === "cut-stream") return sendCutJson(res, out)
    return sendJson(res, 200, out)
  }

  const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true
  const sse = openSse(res, cutAfterOf(ctx.outcome), ctx.chunkDelayMs, ctx.timers, stallAfterOf(ctx.outcome))
  const chunk = (choices: unknown[], extra?: Record<string, unknown>): string =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`
  const words = ctx.pieces(reply)
  for (let i = 0; i < words.length; i++) {
    const delta = toolCall !== undefined
      ? { ...(i === 0 ? { role: "assistant" } : {}), tool_calls: [{ index: 0, ...(i === 0 ? { id: toolCall.id, type: "function" } : {}), function: { ...(i === 0 ? { name: toolCall.function.name } : {}), arguments: words[i] } }] }
      : i === 0 ? { role: "assistant", content: words[i] } : { content: words[i] }
    if (!(await sse.frame(chunk([{ index: 0, delta, logprobs: null, finish_reason: null }])))) return
  }
  if (!(await sse.frame(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: toolCall === undefined ? "stop" : "tool_calls" }])))) return
  if (includeUsage && !(await sse.frame(chunk([], { usage })))) return
  if (!(await sse.frame("data: [DONE]\n\n"))) return
  sse.end()
}

const messages = async (ctx: Ctx): Promise<void> => {
  const { res, body } = ctx
  const model = typeof body.model === "string" ? body.model : "local-chat"
  const turn = fakeTurn(body)
  const reply = "text" in turn ? turn.text : turn.args
  const toolUse = "tool" in turn ? { type: "tool_use", id: `toolu_fake_${ctx.seq}`, name: turn.tool } : undefined
  const stopReason = toolUse === undefined ? "end_turn" : "tool_use"
  const id = `msg_fake_${ctx.seq}`
  const inputTokens = fakePromptTokens(ctx.bodyBytes)
  const outputTokens = fakeCompletionTokens(reply)

  if (body.stream !== true) {
    const out = {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [toolUse === undefined ? { type: "text", text: reply } : { ...toolUse, input: JSON.parse(reply) }],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: outputTokens }
    }
    if (ctx.outcome.kind === "cut-stream") return sendCutJson(res, out)
    return sendJson(res, 200, out)
  }

  const sse = openSse(res, cutAfterOf(ctx.outcome), ctx.chunkDelayMs, ctx.timers, stallAfterOf(ctx.outcome))
  const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
  const frames: Array<() => string> = [
    () =>
      event("message_start", {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: 1 }
        }
      }),
    () =>
      event("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: toolUse === undefined ? { type: "text", text: "" } : { ...toolUse, input: {} }
      }),
    () => event("ping", { type: "ping" }),
    ...ctx.pieces(reply).map((w) => () =>
      event("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: toolUse === undefined ? { type: "text_delta", text: w } : { type: "input_json_delta", partial_json: w }
      })
    ),
    () => event("content_block_stop", { type: "content_block_stop", index: 0 }),
    () =>
      event("message_delta", {
        type: "message_delta",
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: outputTokens }
      }),
    () => event("message_stop", { type: "message_stop" })
  ]
  for (const f of frames) if (!(await sse.frame(f()))) return
  sse.end()
}

/** Text of a Responses content value: a string, or the text of its `input_text` / `output_text` / `text` parts. */
const responsesText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .filter((p): p is { text: string } =>
      typeof p === "object" && p !== null && ["input_text", "output_text", "text"].includes((p as { type?: unknown }).type as string) &&
      typeof (p as { text?: unknown }).text === "string"
    )
    .map((p) => p.text)
    .join("\n")
}

/** What the fake answers on the Responses API, by the same rules as the other formats. */
const responsesTurn = (body: Record<string, unknown>): { text: string } | { tool: string; args: string } => {
  const input = body.input
  const items = Array.isArray(input) ? (input as Array<Record<string, unknown> | null>) : []
  const last = items[items.length - 1]
  if (last?.type === "function_call_output") return { text: fakeReplyText(responsesText(last.output)) }
  let userText = typeof input === "string" ? input : ""
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]
    if (item !== null && typeof item === "object" && (item.type === undefined || item.type === "message") && item.role === "user") {
      userText = responsesText(item.content)
      break
    }
  }
  const tool = Array.isArray(body.tools)
    ? (body.tools as Array<{ type?: unknown; name?: unknown }>).find((t) => t?.type === "function" && typeof t.name === "string")
    : undefined
  if (tool !== undefined) return { tool: tool.name as string, args: JSON.stringify({ text: userText }) }
  return { text: fakeReplyText(userText) }
}

const responses = async (ctx: Ctx): Promise<void> => {
  const { res, body } = ctx
  const model = typeof body.model === "string" ? body.model : "local-chat"
  const turn = responsesTurn(body)
  const reply = "text" in turn ? turn.text : turn.args
  const id = `resp_fake_${ctx.seq}`
  const itemId = "text" in turn ? `msg_fake_${ctx.seq}` : `fc_fake_${ctx.seq}`
  const createdAt = Math.floor(Date.now() / 1000)
  const inputTokens = fakePromptTokens(ctx.bodyBytes)
  const outputTokens = fakeCompletionTokens(reply)
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens
  }
  const item = (status: "in_progress" | "completed", text: string) =>
    "text" in turn
      ? { id: itemId, type: "message", status, role: "assistant", content: status === "completed" ? [{ type: "output_text", text, annotations: [], logprobs: [] }] : [] }
      : { id: itemId, type: "function_call", status, call_id: `call_fake_${ctx.seq}`, name: turn.tool, arguments: text }
  const response = (status: "in_progress" | "completed", output: Array<unknown>, withUsage: boolean) => ({
    id,
    object: "response",
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: 1,
    truncation: "disabled",
    usage: withUsage ? usage : null,
    user: null,
    metadata: body.metadata ?? {}
  })

  if (body.stream !== true) {
    const out = response("completed", [item("completed", reply)], true)
    if (ctx.outcome.kind === "cut-stream") return sendCutJson(res, out)
    return sendJson(res, 200, out)
  }

  const sse = openSse(res, cutAfterOf(ctx.outcome), ctx.chunkDelayMs, ctx.timers, stallAfterOf(ctx.outcome))
  let sequence = 0
  const event = (type: string, data: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`
  const pieces = ctx.pieces(reply)
  const frames: Array<() => string> = [
    () => event("response.created", { response: response("in_progress", [], false) }),
    () => event("response.in_progress", { response: response("in_progress", [], false) }),
    () => event("response.output_item.added", { output_index: 0, item: item("in_progress", "") })
  ]
  if ("text" in turn) {
    const part = (text: string) => ({ type: "output_text", text, annotations: [], logprobs: [] })
    frames.push(
      () => event("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: part("") }),
      ...pieces.map((delta) => () => event("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta, logprobs: [] })),
      () => event("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text: reply, logprobs: [] }),
      () => event("response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part: part(reply) })
    )
  } else {
    frames.push(
      ...pieces.map((delta) => () => event("response.function_call_arguments.delta", { item_id: itemId, output_index: 0, delta })),
      () => event("response.function_call_arguments.done", { item_id: itemId, output_index: 0, name: turn.tool, arguments: reply })
    )
  }
  frames.push(() => event("response.output_item.done", { output_index: 0, item: item("completed", reply) }))
  const asked = (body.metadata as { fake_unknown_event?: unknown } | undefined)?.fake_unknown_event
  if (typeof asked === "string") {
    const unknown = asked.startsWith("response.") ? asked : "response.novel_thing"
    frames.push(() => event(unknown, { item_id: itemId, output_index: 0, text: reply }))
  }
  frames.push(() => event("response.completed", { response: response("completed", [item("completed", reply)], true) }))
  for (const f of frames) if (!(await sse.frame(f()))) return
  sse.end()
}

/** Anthropic's token counting: a count of the body as the fake counts prompts. */
const countTokens = (ctx: Ctx): void => {
  if (ctx.outcome.kind === "cut-stream") return sendCutJson(ctx.res, { input_tokens: fakePromptTokens(ctx.bodyBytes) })
  sendJson(ctx.res, 200, { input_tokens: fakePromptTokens(ctx.bodyBytes) })
}

/** Bedrock Converse (JSON) and ConverseStream (AWS event stream frames), after the signature was checked. */
const bedrockConverse = async (ctx: Ctx): Promise<void> => {
  const { res } = ctx
  const route = bedrockRouteOf(ctx.path)!
  const turn = fakeConverseTurn(ctx.body, fakeReplyText)
  const inputTokens = fakePromptTokens(ctx.bodyBytes)
  const outputTokens = fakeCompletionTokens("text" in turn ? turn.text : turn.args)
  const requestId = { "x-amzn-requestid": `fake-bedrock-${ctx.seq}` }
  if (!route.stream) {
    const out = converseAnswer(turn, ctx.seq, inputTokens, outputTokens)
    if (ctx.outcome.kind === "cut-stream") return sendCutJson(res, out)
    return sendJson(res, 200, out, requestId)
  }
  for (const [name, value] of Object.entries(requestId)) res.setHeader(name, value)
  const stream = openSse(res, cutAfterOf(ctx.outcome), ctx.chunkDelayMs, ctx.timers, stallAfterOf(ctx.outcome), "application/vnd.amazon.eventstream")
  const badAfter = ctx.outcome.kind === "bad-frame" ? ctx.outcome.afterChunks : undefined
  const frames = converseStreamFrames(turn, ctx.seq, inputTokens, outputTokens, ctx.pieces)
  for (let i = 0; i < frames.length; i++) {
    if (!(await stream.frame(i === badAfter ? corruptFrame(frames[i]!) : frames[i]!))) return
  }
  stream.end()
}

const embeddings = (ctx: Ctx): void => {
  const { res, body } = ctx
  const model = typeof body.model === "string" ? body.model : "local-embed"
  // An array of numbers is one tokenised input; an array of anything else is a batch.
  const inputs: unknown[] = Array.isArray(body.input) && !body.input.every((x) => typeof x === "number")
    ? body.input
    : [body.input ?? ""]
  const base64 = body.encoding_format === "base64"
  const data = inputs.map((input, index) => {
    const vector = fakeEmbedding(input)
    const embedding = base64
      ? Buffer.from(new Float32Array(vector).buffer).toString("base64")
      : vector
    return { object: "embedding", index, embedding }
  })
  const promptTokens = fakePromptTokens(ctx.bodyBytes)
  const out = { object: "list", data, model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }
  if (ctx.outcome.kind === "cut-stream") return sendCutJson(res, out)
  sendJson(res, 200, out)
}


// Gemini's native format: `contents` of `parts`, the model in the path, `usageMetadata`, `finishReason`.

type GeminiJson = Record<string, any>

const geminiTexts = (parts: unknown): string[] =>
  Array.isArray(parts) ? parts.filter((p) => typeof p?.text === "string").map((p) => p.text as string) : []

/** What the fake answers in Gemini's format, by the same rules as the other formats. */
const geminiTurn = (body: Record<string, unknown>): { text: string } | { tool: string; args: Record<string, unknown> } => {
  const contents = Array.isArray(body.contents) ? (body.contents as GeminiJson[]) : []
  const last = contents[contents.length - 1]
  const results = Array.isArray(last?.parts) ? last.parts.filter((p: GeminiJson) => p?.functionResponse !== undefined) : []
  if (results.length > 0) {
    return {
      text: fakeReplyText(results.map((p: GeminiJson) => {
        const r = p.functionResponse.response
        return typeof r?.content === "string" ? r.content : JSON.stringify(r)
      }).join("\n"))
    }
  }
  let userText = ""
  for (let i = contents.length - 1; i >= 0; i--) {
    if (contents[i]?.role === "user" && geminiTexts(contents[i]!.parts).length > 0) {
      userText = geminiTexts(contents[i]!.parts).join("\n")
      break
    }
  }
  const tools = Array.isArray(body.tools) ? (body.tools as GeminiJson[]) : []
  const tool = tools[0]?.functionDeclarations?.[0]?.name
  if (typeof tool === "string") return { tool, args: { text: userText } }
  return { text: fakeReplyText(userText) }
}

const GEMINI_ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/

/** The fake's thought signature for the function call it answers request `seq` with (base64, as Gemini's are). */
const geminiThoughtSignature = (seq: number): string => Buffer.from(`fake-thought-signature-${seq}`).toString("base64")

const gemini = async (ctx: Ctx): Promise<void> => {
  const { res, body } = ctx
  const match = GEMINI_ROUTE.exec(ctx.path)!
  const model = decodeURIComponent(match[1]!)
  const stream = match[2] === "streamGenerateContent"
  const turn = geminiTurn(body)
  const reply = "text" in turn ? turn.text : JSON.stringify(turn.args)
  const responseId = `gemini-fake-${ctx.seq}`
  const promptTokenCount = fakePromptTokens(ctx.bodyBytes)
  const candidatesTokenCount = fakeCompletionTokens(reply)
  const usageMetadata = { promptTokenCount, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount }
  // Like a thinking model (Gemini 2.5 and later), a function call comes with an opaque thought signature, which the
  // client is to send back on that call in the next turn.
  const answerPart = "text" in turn ? { text: turn.text } : { functionCall: { name: turn.tool, args: turn.args }, thoughtSignature: geminiThoughtSignature(ctx.seq) }

  if (!stream) {
    const out = {
      candidates: [{ content: { role: "model", parts: [answerPart] }, finishReason: "STOP", index: 0 }],
      usageMetadata,
      modelVersion: model,
      responseId
    }
    if (ctx.outcome.kind === "cut-stream") return sendCutJson(res, out)
    return sendJson(res, 200, out)
  }

  const sse = openSse(res, cutAfterOf(ctx.outcome), ctx.chunkDelayMs, ctx.timers, stallAfterOf(ctx.outcome))
  // Gemini frames end with CRLF CRLF; every frame is a whole GenerateContentResponse with the usage so far.
  const frame = (candidate: GeminiJson, usage: GeminiJson): string =>
    `data: ${JSON.stringify({ candidates: [{ ...candidate, index: 0 }], usageMetadata: usage, modelVersion: model, responseId })}\r\n\r\n`
  const pieces = "text" in turn ? ctx.pieces(turn.text) : []
  for (const piece of pieces) {
    if (!(await sse.frame(frame({ content: { role: "model", parts: [{ text: piece }] } }, { promptTokenCount, totalTokenCount: promptTokenCount })))) return
  }
  // The last frame carries the finish reason and the final usage (with a function call, the call itself).
  const lastParts = "text" in turn ? [{ text: "" }] : [answerPart]
  if (!(await sse.frame(frame({ content: { role: "model", parts: lastParts }, finishReason: "STOP" }, usageMetadata)))) return
  sse.end()
}

const modelsList = (): unknown => ({
  object: "list",
  data: FAKE_PROVIDER_MODELS.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "fake-provider" }))
})

type JsonRoute = (ctx: Ctx) => void | Promise<void>

const POST_ROUTES: Record<string, { dialect: Dialect; handle: JsonRoute }> = {
  "/v1/chat/completions": { dialect: "openai", handle: chatCompletions },
  "/v1/messages": { dialect: "anthropic", handle: messages },
  "/v1/messages/count_tokens": { dialect: "anthropic", handle: countTokens },
  "/v1/responses": { dialect: "openai", handle: responses },
  "/v1/embeddings": { dialect: "openai", handle: embeddings }
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const isBehaviour = (b: unknown): b is Behaviour => {
  if (typeof b !== "object" || b === null) return false
  const o = b as Record<string, unknown>
  switch (o.kind) {
    case "normal":
    case "hang":
      return true
    case "status":
      return typeof o.status === "number" && Number.isInteger(o.status) && o.status >= 100 && o.status <= 599
    case "cut-stream":
    case "stall-stream":
    case "bad-frame":
      return typeof o.afterChunks === "number" && Number.isInteger(o.afterChunks) && o.afterChunks >= 0
    case "delay":
      return typeof o.ms === "number" && o.ms >= 0
    default:
      return false
  }
}

export const startFakeProvider = async (opts: FakeProviderOptions = {}): Promise<FakeProvider> => {
  const host = opts.host ?? FAKE_PROVIDER_DEFAULT_HOST
  const baseDelayMs = opts.delayMs ?? 0
  const chunkDelayMs = opts.chunkDelayMs ?? 0
  const pieces = opts.streamPieceChars === undefined ? splitIntoWords : splitIntoPieces(opts.streamPieceChars)
  const received: RecordedRequest[] = []
  const timers = new Set<NodeJS.Timeout>()
  let behaviour: Behaviour = { kind: "normal" }
  let open = 0
  let seq = 0
  let total = 0
  const maxRecorded = opts.maxRecorded ?? Number.POSITIVE_INFINITY

  const reset = (): void => {
    received.length = 0
    total = 0
    behaviour = { kind: "normal" }
  }

  const control = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const body = await readBody(req)
    if (req.method === "GET" && path === "/_fake/received") {
      return sendJson(res, 200, {
        count: received.length,
        total_since_reset: total,
        requests: received.map((r) => ({
          method: r.method,
          path: r.path,
          headers: r.headers,
          body: r.body.toString("utf8"),
          at: r.at
        }))
      })
    }
    if (req.method === "GET" && path === "/_fake/open") return sendJson(res, 200, { open })
    if (req.method === "POST" && path === "/_fake/reset") {
      reset()
      return sendJson(res, 200, { ok: true })
    }
    if (req.method === "POST" && path === "/_fake/behaviour") {
      let parsed: unknown
      try {
        parsed = JSON.parse(body.toString("utf8"))
      } catch {
        parsed = undefined
      }
      if (!isBehaviour(parsed)) {
        return sendJson(res, 400, errorBody("openai", 400, "body must be a Behaviour JSON object", "invalid_behaviour"))
      }
      behaviour = parsed
      return sendJson(res, 200, { ok: true, behaviour })
    }
    sendJson(res, 404, errorBody("openai", 404, `unknown control endpoint ${req.method} ${path}`, "not_found"))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? "GET"
    const path = (req.url ?? "/").split("?", 1)[0]!
    if (path.startsWith("/_fake/")) return control(req, res, path)

    open++
    res.once("close", () => {
      open--
    })
    const body = await readBody(req)
    // Recorded before anything else happens, so even hung or failed calls are visible to tests.
    received.push({ method, path, headers: { ...req.headers }, body, at: Date.now() })
    total++
    if (received.length > maxRecorded) received.shift()
    const mySeq = ++seq

    const bedrock = bedrockRouteOf(path)
    const geminiMatch = GEMINI_ROUTE.exec(path)
    const route = bedrock !== undefined
      ? { dialect: "bedrock" as const, handle: bedrockConverse }
      : geminiMatch !== null
      ? { dialect: "gemini" as const, handle: gemini }
      : POST_ROUTES[path]
    const isModels = path === "/v1/models"
    if (geminiMatch !== null) {
      // As Google answers: a key is required, and streamGenerateContent speaks SSE only when asked with alt=sse.
      const key = headerString(req.headers["x-goog-api-key"])
      if (key === undefined || key === "") return sendJson(res, 403, errorBody("gemini", 403, "Method doesn't allow unregistered callers.", null))
      const alt = new URLSearchParams((req.url ?? "").split("?")[1] ?? "").get("alt")
      if (geminiMatch[2] === "streamGenerateContent" && alt !== "sse") {
        return sendJson(res, 400, errorBody("gemini", 400, "the fake provider streams only with alt=sse", null))
      }
    }
    if (route === undefined && !isModels) {
      return sendJson(res, 404, errorBody("openai", 404, `no route for ${method} ${path}`, "not_found"))
    }
    if ((isModels && method !== "GET") || (route !== undefined && method !== "POST")) {
      res.setHeader("allow", isModels ? "GET" : "POST")
      return sendJson(res, 405, errorBody(route?.dialect ?? "openai", 405, `method ${method} not allowed on ${path}`, "method_not_allowed"))
    }

    let json: Record<string, unknown> = {}
    if (route !== undefined) {
      let parsed: unknown
      try {
        parsed = JSON.parse(body.toString("utf8"))
      } catch {
        return sendJson(res, 400, errorBody(route.dialect, 400, "request body is not valid JSON", "invalid_json"))
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        return sendJson(res, 400, errorBody(route.dialect, 400, "request body must be a JSON object", "invalid_json"))
      }
      json = parsed as Record<string, unknown>
    }
    if (bedrock !== undefined) {
      // As AWS does, the signature is checked before anything else about the call.
      const refusal = await verifyBedrockSignature(req, path, body)
      if (refusal !== undefined) return sendJson(res, refusal.status, { message: refusal.message }, { "x-amzn-errortype": refusal.type })
    }

    const plan = combine(
      [
        planFromHeaders(req.headers),
        planFromModel(bedrock?.modelId ?? (geminiMatch !== null ? decodeURIComponent(geminiMatch[1]!) : json.model)),
        planFromBehaviour(behaviour)
      ],
      baseDelayMs
    )
    await sleepUnlessClosed(plan.delayMs, res, timers)
    if (res.destroyed) return
    const outcome = plan.outcome
    if (outcome.kind === "hang") return // the response stays open until the client or close() ends it
    if (outcome.kind === "status") {
      const dialect = route?.dialect ?? "openai"
      return sendJson(
        res,
        outcome.status,
        outcome.body ?? errorBody(dialect, outcome.status, `fake provider injected status ${outcome.status}`, null),
        dialect === "bedrock" ? { "x-amzn-errortype": bedrockErrorType(outcome.status) } : {}
      )
    }
    if (isModels) {
      if (outcome.kind === "cut-stream") return sendCutJson(res, modelsList())
      return sendJson(res, 200, modelsList())
    }
    await route!.handle({ res, path, body: json, bodyBytes: body.length, outcome, seq: mySeq, chunkDelayMs, pieces, timers })
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, errorBody("openai", 500, `fake provider failure: ${String(err)}`, null))
      } else {
        res.destroy()
      }
    })
  })
  const sockets = new Set<Socket>()
  server.on("connection", (s) => {
    sockets.add(s)
    s.once("close", () => sockets.delete(s))
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(opts.port ?? FAKE_PROVIDER_DEFAULT_PORT, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address

  return {
    url: `http://${urlHost}:${address.port}`,
    received,
    openRequests: () => open,
    setBehaviour: (b) => {
      behaviour = b
    },
    reset,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of timers) clearTimeout(t)
        timers.clear()
        server.close((err) => (err ? reject(err) : resolve()))
        // Hung requests and keep-alive connections would otherwise hold close() forever.
        for (const s of sockets) s.destroy()
      })
  }
}

// ---------------------------------------------------------------------------------------------
// Program entry
// ---------------------------------------------------------------------------------------------

const parsePort = (s: string | undefined, name: string): number | undefined => {
  if (s === undefined || s === "") return undefined
  const n = Number(s)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be a port number, got ${JSON.stringify(s)}`)
  return n
}

const parseMs = (s: string | undefined, name: string): number | undefined => {
  if (s === undefined) return undefined
  const n = Number(s)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(s)}`)
  return n
}

const parsePieceChars = (s: string): number => {
  const n = Number(s)
  if (!Number.isInteger(n) || n < 1) throw new Error(`--stream-piece-chars must be a positive integer, got ${JSON.stringify(s)}`)
  return n
}

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "delay-ms": { type: "string" },
      "chunk-delay-ms": { type: "string" },
      "stream-piece-chars": { type: "string" }
    }
  })
  const settings = readSettings(FAKE_PROVIDER_SETTINGS, process.env)
  const host = values.host ?? settings.host ?? FAKE_PROVIDER_DEFAULT_HOST
  const port = parsePort(values.port, "--port") ?? settings.port ?? FAKE_PROVIDER_DEFAULT_PORT
  const provider = await startFakeProvider({
    host,
    port,
    delayMs: parseMs(values["delay-ms"], "--delay-ms"),
    chunkDelayMs: parseMs(values["chunk-delay-ms"], "--chunk-delay-ms"),
    // Tests of other processes (the Python SDK's) cut aliases across SSE frames with this.
    ...(values["stream-piece-chars"] === undefined ? {} : { streamPieceChars: parsePieceChars(values["stream-piece-chars"]) }),
    // A long benchmark run must not grow memory without bound.
    maxRecorded: 10_000
  })
  process.stdout.write(`${JSON.stringify({ level: "info", msg: "fake provider listening", url: provider.url })}\n`)
  const stop = (): void => {
    provider.close().then(() => process.exit(0), () => process.exit(1))
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  // `npm run fake-provider` stopped by a signal to npm stops this too.
  stopWithParent()
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`${JSON.stringify({ level: "error", msg: "fake provider failed to start", error: String(err) })}\n`)
    process.exit(1)
  })
}
