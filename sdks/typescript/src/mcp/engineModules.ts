/** What the MCP tools use of the tokenisation engine and the gateway client; imported through engine.ts, lazily. */
export { createSession, detectSpans, tokeniseText } from "../tokeniser/index.ts"
export { nameModelOf } from "../engine.ts"
export { RelayClient } from "../index.ts"
