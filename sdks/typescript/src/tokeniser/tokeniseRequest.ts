import canonicalize from "canonicalize"
import { createCheckpoint } from "./checkpoint.ts"
import { createSession, type SessionOptions, type TokeniserSession } from "./session.ts"
import { tokeniseText } from "./tokeniseText.ts"
import type { AliasMap } from "./types.ts"

export type Route = "chat.completions" | "messages" | "messages.count_tokens" | "embeddings" | "responses"

export interface TokeniseRequestOptions extends SessionOptions {
  /** An existing session for this request; by default a fresh one is created from the options. */
  readonly session?: TokeniserSession
  /**
   * Aborting it (the client went away, the time budget ran out) stops the work between two windows of
   * text; the promise then rejects with the signal's reason and nothing may be sent.
   */
  readonly signal?: AbortSignal
}

export interface TokenisedRequest {
  /** The request body with every text field tokenised (a copy; the input is not modified). */
  readonly body: unknown
  /** The exact bytes to send: UTF-8 of the RFC 8785 (JCS) form of `body`, so egress_sha256 hashes them. */
  readonly bodyBytes: Uint8Array
  /** Alias -> original, for detokenising the response. Keep it on the device. */
  readonly map: AliasMap
  /** Categories and counts of replaced values (never values), for the v3 attestation. */
  readonly detectorsFired: Record<string, number>
  /** True when the name model failed and `failOpen` let the request through without name detection. */
  readonly nameModelSkipped: boolean
  /** Always true: `bodyBytes` are the JCS text of `body` (TokenisedBody.canonical). */
  readonly canonical: true
}

export class InvalidRequestBody extends Error {
  readonly _tag = "InvalidRequestBody"
  constructor(message: string) {
    super(message)
    this.name = "InvalidRequestBody"
  }
}

/** A place in the body that holds user text: read it, then write its tokenised form back. */
interface TextSlot {
  readonly text: string
  readonly write: (tokenised: string) => void
  /** Run once after every slot is written (slots may share it): puts what the writes changed into the body. */
  readonly commit?: () => void
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const slot = (holder: Json | Array<unknown>, key: string | number): TextSlot | undefined => {
  const value = (holder as Record<string | number, unknown>)[key]
  return typeof value === "string"
    ? { text: value, write: (t) => ((holder as Record<string | number, unknown>)[key] = t) }
    : undefined
}

/** Every string inside a JSON value (object values and array items, at any depth; keys are names, not user text). */
const leafSlots = (value: unknown): Array<TextSlot> => {
  if (Array.isArray(value)) return value.flatMap((item, i) => (typeof item === "string" ? [slot(value, i)!] : leafSlots(item)))
  if (!isObject(value)) return []
  return Object.keys(value).flatMap((key) => (typeof value[key] === "string" ? [slot(value, key)!] : leafSlots(value[key])))
}

/**
 * A tool call's `arguments`, a JSON text: the strings inside it, written back as JSON once one of them changed (an
 * unchanged one keeps its bytes). Text that is not JSON is tokenised as it is. These are the values the client
 * restored in the model's answer (the detokeniser restores tool-call arguments), so an app that sends the
 * conversation back would otherwise send them upstream in the clear.
 */
const jsonTextSlots = (holder: Json, key: string): Array<TextSlot> => {
  const text = holder[key]
  if (typeof text !== "string") return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return [slot(holder, key)!]
  }
  if (typeof parsed === "string") return [{ text: parsed, write: (t) => t !== parsed && (holder[key] = JSON.stringify(t)) }]
  // Serialised once for the whole arguments text, after its last value was written, not once per replaced value.
  let changed = false
  const commit = () => {
    if (changed) holder[key] = JSON.stringify(parsed)
  }
  return leafSlots(parsed).map((leaf) => ({
    text: leaf.text,
    write: (t) => {
      if (t === leaf.text) return
      leaf.write(t)
      changed = true
    },
    commit
  }))
}

/** Text of an OpenAI or Anthropic `content`: a string, or an array of parts/blocks with `type: "text"`. */
const contentSlots = (holder: Json, key: string): Array<TextSlot> => {
  const content = holder[key]
  if (typeof content === "string") return [slot(holder, key)!]
  if (!Array.isArray(content)) return []
  const slots: Array<TextSlot> = []
  for (const part of content) {
    if (!isObject(part)) continue
    if (part.type === "text") {
      const s = slot(part, "text")
      if (s !== undefined) slots.push(s)
    }
    // Anthropic tool results carry their own content (a string or text blocks) that the model reads.
    if (part.type === "tool_result") slots.push(...contentSlots(part, "content"))
    // An Anthropic assistant turn's tool call: its input holds the arguments the client restored.
    if (part.type === "tool_use") slots.push(...leafSlots(part.input))
  }
  return slots
}

/** One message's user text: its content, then (OpenAI assistant turns) its tool calls' arguments. */
const messageSlots = (m: Json): Array<TextSlot> => {
  const slots = contentSlots(m, "content")
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) if (isObject(call) && isObject(call.function)) slots.push(...jsonTextSlots(call.function, "arguments"))
  }
  // The deprecated single function call of older OpenAI clients.
  if (isObject(m.function_call)) slots.push(...jsonTextSlots(m.function_call, "arguments"))
  return slots
}

const messagesSlots = (body: Json): Array<TextSlot> => {
  if (!Array.isArray(body.messages)) throw new InvalidRequestBody("messages must be an array")
  return body.messages.flatMap((m) => (isObject(m) ? messageSlots(m) : []))
}

/**
 * Interim walk of an OpenAI Responses request, until the egress policy (sdks/vectors/egress-policy.json) classifies
 * its fields: `instructions`, `input` as a string or items (message `content` as a string or `input_text` /
 * `output_text` / `text` parts, `function_call` arguments, `function_call_output` output, reasoning summaries).
 */
const responsesSlots = (body: Json): Array<TextSlot> => {
  const slots: Array<TextSlot> = []
  const s = slot(body, "instructions")
  if (s !== undefined) slots.push(s)
  const input = body.input
  if (typeof input === "string") return [...slots, slot(body, "input")!]
  if (input === undefined || input === null) return slots
  if (!Array.isArray(input)) throw new InvalidRequestBody("input must be a string or an array of items")
  const parts = (holder: Json, key: string) => {
    const content = holder[key]
    if (typeof content === "string") return slots.push(slot(holder, key)!)
    if (!Array.isArray(content)) return
    for (const part of content) {
      if (isObject(part) && (part.type === "input_text" || part.type === "output_text" || part.type === "text" || part.type === "summary_text")) {
        const t = slot(part, "text")
        if (t !== undefined) slots.push(t)
      }
    }
  }
  for (const item of input) {
    if (!isObject(item)) continue
    if (item.type === "function_call") slots.push(...jsonTextSlots(item, "arguments"))
    else if (item.type === "function_call_output") parts(item, "output")
    else if (item.type === "reasoning") parts(item, "summary")
    else parts(item, "content")
  }
  return slots
}

const slotsFor = (route: Route, body: Json): Array<TextSlot> => {
  switch (route) {
    case "chat.completions":
      return messagesSlots(body)
    case "messages":
    case "messages.count_tokens":
      return [...contentSlots(body, "system"), ...messagesSlots(body)]
    case "responses":
      return responsesSlots(body)
    case "embeddings": {
      const input = body.input
      if (typeof input === "string") return [slot(body, "input")!]
      if (Array.isArray(input)) return input.flatMap((_, i) => slot(input, i) ?? [])
      // Token-id arrays carry no text we can read; they are left as they are.
      return []
    }
  }
}

/**
 * Tokenises the user text of one OpenAI chat completions, Anthropic messages or embeddings request:
 * `messages[].content` (strings or text parts), the arguments of earlier tool calls (OpenAI `tool_calls`,
 * Anthropic `tool_use` input), Anthropic `system`, embeddings `input`. Every other field is left untouched. A streamed chat completion gets `stream_options.include_usage: true` so the
 * provider reports usage (the gateway relays bytes unchanged and cannot add it).
 * Rejects with NameModelUnavailable when names are enabled, the model fails and failOpen is not set,
 * and with `opts.signal`'s reason when it is aborted: the caller must then send nothing.
 */
export const tokeniseRequest = async (
  route: Route,
  body: unknown,
  opts: TokeniseRequestOptions = {}
): Promise<TokenisedRequest> => {
  if (!isObject(body)) throw new InvalidRequestBody("request body must be a JSON object")
  const copy = structuredClone(body)
  const session = opts.session ?? createSession(opts)
  const slots = slotsFor(route, copy)
  // Register every text first so no alias can coincide with a string already present anywhere in the request.
  for (const s of slots) session.observe(s.text)
  // One checkpoint for the whole request: many short texts yield as often as one long one.
  const checkpoint = createCheckpoint(opts.signal)
  // In order, one at a time: aliases are numbered by first appearance in the request.
  for (const s of slots) s.write(await tokeniseText(s.text, session, { signal: opts.signal, checkpoint }))
  for (const commit of new Set(slots.map((s) => s.commit))) commit?.()
  await checkpoint()
  if (route === "chat.completions" && copy.stream === true) {
    const streamOptions = isObject(copy.stream_options) ? copy.stream_options : {}
    copy.stream_options = { ...streamOptions, include_usage: true }
  }
  const canonical = canonicalize(copy)
  if (canonical === undefined) throw new InvalidRequestBody("request body cannot be serialised as JSON")
  return {
    body: copy,
    bodyBytes: new TextEncoder().encode(canonical),
    map: session.map,
    detectorsFired: { ...session.detectorsFired },
    nameModelSkipped: session.nameModelSkipped,
    canonical: true
  }
}
