/** What the MCP tools use of the tokenisation engine and the gateway client; imported through engine.ts, lazily. */
export { createSession, detectSpans, tokeniseText } from "../../sdks/typescript/src/tokeniser/index.ts"
export { nameModelOf } from "../../sdks/typescript/src/engine.ts"
export { RelayClient } from "../../sdks/typescript/src/index.ts"
