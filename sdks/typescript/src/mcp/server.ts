/**
 * One MCP server per session (stdio has one; HTTP one per Mcp-Session-Id), on the official SDK's low-level Server:
 * tools/list answers the 22 tools with their JSON schemas; tools/call validates the arguments against the tool's
 * schema and answers a tool result, or a tool error with a stable code. Nothing a tool throws reaches the protocol.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import type { SessionContext, ToolDefinition } from "./context.ts"
import { errorResult, toolError } from "./toolResult.ts"
import { TOOLS } from "./tools/index.ts"

const jsonSchema = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>
  return rest
}

const describe = (tool: ToolDefinition): Tool => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: jsonSchema(tool.input) as Tool["inputSchema"],
  ...(tool.output === undefined ? {} : { outputSchema: jsonSchema(tool.output) as Tool["outputSchema"] })
})

/** Computed once: the listing is the same for every session. */
const LISTING: ReadonlyArray<Tool> = TOOLS.map(describe)
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]))

const issuesText = (error: z.ZodError) =>
  error.issues.slice(0, 5).map((i) => `${i.path.length === 0 ? "arguments" : i.path.join(".")}: ${i.message}`).join("; ")

export const callTool = async (name: string, args: unknown, session: SessionContext): Promise<CallToolResult> => {
  const tool = BY_NAME.get(name)
  if (tool === undefined) return toolError("unknown_tool", `There is no tool ${JSON.stringify(name)}; tools/list names the 22 tools.`)
  const parsed = tool.input.safeParse(args ?? {})
  if (!parsed.success) return toolError("invalid_arguments", `${name}: ${issuesText(parsed.error)}.`)
  try {
    return await tool.run(parsed.data, session)
  } catch (error) {
    return errorResult(error)
  }
}

export const createMcpServer = (session: SessionContext, version: string): Server => {
  const server = new Server({ name: "privacy-relay", title: "Privacy Relay", version }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...LISTING] }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => callTool(request.params.name, request.params.arguments, session))
  return server
}
