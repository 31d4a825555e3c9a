/**
 * What a tool answers: `structuredContent` plus a readable text, or a tool error (`isError: true`) whose text is
 * `<code>: <message>` with a stable code (docs/mcp.md lists them). A tool error carries no structuredContent: MCP
 * clients check structuredContent against the tool's output schema even on errors. A tool error is an answer the
 * model can act on, never a protocol failure: the server stays up.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { RelayError } from "../errors.ts"
import { JwksError } from "../verify/errors.ts"

export class ToolError extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}

export const ok = (structured: Record<string, unknown>, text: string): CallToolResult => ({
  content: [{ type: "text", text }],
  structuredContent: structured
})

export const toolError = (code: string, message: string): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: `${code}: ${message}` }]
})

/** The code of a tool error's text (`<code>: <message>`). */
export const errorCodeOf = (result: Record<string, unknown>): string | undefined => {
  const first: any = Array.isArray(result.content) ? result.content[0] : undefined
  const m = typeof first?.text === "string" ? /^([a-z0-9_]+): /.exec(first.text) : null
  return m === null ? undefined : m[1]
}

/** Any failure of a tool as a tool error: ours, the SDK's typed errors (gateway codes included), JWKS failures. */
export const errorResult = (error: unknown): CallToolResult => {
  if (error instanceof ToolError) return toolError(error.code, error.message)
  if (error instanceof RelayError) return toolError(error.code, error.message)
  if (error instanceof JwksError) return toolError("jwks_unavailable", error.message)
  return toolError("internal_error", `The tool failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`)
}

/** JSON for the text rendering: indented, so a person reading the host's tool log can follow it. */
export const pretty = (value: unknown): string => JSON.stringify(value, null, 2)
