/**
 * Converse's `stopReason` in the Messages API's words (the OpenAI finish reason follows from that through
 * `anthropicStopToOpenaiFinish`). Values: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 * (response `stopReason`).
 */
export const converseStopToAnthropicStop = (stop: unknown): string => {
  switch (stop) {
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "model_context_window_exceeded":
      return stop
    case "guardrail_intervened":
    case "content_filtered":
      return "refusal"
    default:
      // end_turn, and the malformed_* reasons: the turn ended with what was said so far
      return "end_turn"
  }
}
