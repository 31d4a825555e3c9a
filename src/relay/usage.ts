/**
 * Reads what the gateway meters from an upstream response: the provider's response id and token usage.
 * Works on whole JSON bodies and, incrementally, on SSE streams (OpenAI chunks, Anthropic events, OpenAI Responses
 * events), looking only at ids and usage fields: the content passes by untouched and unread.
 */
export interface UpstreamUsage {
  responseId: string | undefined
  inputTokens: number | undefined
  outputTokens: number | undefined
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined)

/** Usage from a whole (non-streamed) response body, OpenAI (chat or Responses) or Anthropic format. */
export const usageFromJson = (body: unknown): UpstreamUsage => {
  const b = (body ?? {}) as Record<string, any>
  const usage = (b.usage ?? {}) as Record<string, unknown>
  return {
    responseId: typeof b.id === "string" ? b.id : undefined,
    inputTokens: num(usage.prompt_tokens) ?? num(usage.input_tokens),
    outputTokens: num(usage.completion_tokens) ?? num(usage.output_tokens)
  }
}

/** The events that end a Responses stream; each carries the final response object and its usage. */
const RESPONSES_TERMINAL: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed"])

/**
 * Incremental SSE reader: feed it decoded text as it arrives; it keeps a partial line between pushes.
 * Only `data:` lines that mention an id or usage are parsed.
 */
export const createSseUsageReader = () => {
  const usage: UpstreamUsage = { responseId: undefined, inputTokens: undefined, outputTokens: undefined }
  let partial = ""
  let sawDone = false
  let responseEnded = false

  const onData = (data: string) => {
    if (data === "[DONE]") {
      sawDone = true
      return
    }
    // A Responses lifecycle event carries the response object (`"response":` can only be a key: quotes inside
    // string values are escaped).
    const lifecycle = data.includes("\"response\":")
    if (!lifecycle && !data.includes("usage") && (usage.responseId !== undefined || !data.includes("\"id\""))) return
    let event: Record<string, any>
    try {
      event = JSON.parse(data)
    } catch {
      return
    }
    // OpenAI chunk: { id, usage? }; Anthropic: message_start { message: { id, usage } }, message_delta { usage };
    // OpenAI Responses: response.created ... response.completed { response: { id, usage } }.
    const responses = lifecycle && typeof event.type === "string" && event.type.startsWith("response.") && typeof event.response === "object" && event.response !== null
    if (responses && RESPONSES_TERMINAL.has(event.type)) responseEnded = true
    const message = event.type === "message_start" ? event.message ?? {} : responses ? event.response : event
    if (usage.responseId === undefined && typeof message.id === "string") usage.responseId = message.id
    const u = (message.usage ?? event.usage) as Record<string, unknown> | undefined
    if (u !== undefined && u !== null) {
      const input = num(u.prompt_tokens) ?? num(u.input_tokens)
      const output = num(u.completion_tokens) ?? num(u.output_tokens)
      if (input !== undefined && input > 0) usage.inputTokens = input
      if (output !== undefined) usage.outputTokens = output
    }
  }

  return {
    push(text: string) {
      const lines = (partial + text).split("\n")
      partial = lines.pop() ?? ""
      for (const raw of lines) {
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
        if (line.startsWith("data:")) onData(line.slice(line.startsWith("data: ") ? 6 : 5))
      }
    },
    usage: () => usage,
    sawDone: () => sawDone,
    /** A Responses stream's terminal event (response.completed, .incomplete or .failed) arrived: the answer is whole. */
    responseEnded: () => responseEnded
  }
}
