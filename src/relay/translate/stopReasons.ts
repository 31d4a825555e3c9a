/** How one format's reason for ending an answer reads in the other's. */
export const anthropicStopToOpenaiFinish = (stop: unknown): string => {
  switch (stop) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool_calls"
    case "refusal":
      return "content_filter"
    default:
      // end_turn, stop_sequence, pause_turn
      return "stop"
  }
}

export const openaiFinishToAnthropicStop = (finish: unknown): string => {
  switch (finish) {
    case "length":
      return "max_tokens"
    case "tool_calls":
    case "function_call":
      return "tool_use"
    case "content_filter":
      return "refusal"
    default:
      return "end_turn"
  }
}

/**
 * Gemini's `finishReason` (https://ai.google.dev/api/generate-content#FinishReason) as OpenAI's: a stop with
 * function calls is `tool_calls` (Gemini says STOP), every blocked or flagged answer is `content_filter`.
 */
export const geminiFinishToOpenaiFinish = (reason: unknown, calledTools: boolean): string => {
  switch (reason) {
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
    case "LANGUAGE":
      return "content_filter"
    default:
      // STOP, MALFORMED_FUNCTION_CALL, OTHER, FINISH_REASON_UNSPECIFIED
      return calledTools ? "tool_calls" : "stop"
  }
}
