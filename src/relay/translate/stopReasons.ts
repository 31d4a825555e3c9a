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
