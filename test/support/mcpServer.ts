import { spawn } from "node:child_process"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { expect } from "vitest"
import { errorCodeOf } from "../../sdks/typescript/src/mcp/toolResult.ts"

const NODE = "node_modules/.bin/node"

/** The 22 tool names of the spec, in its order. */
export const TOOL_NAMES = [
  "tokenise", "detokenise", "detect_pii", "tokenise_file", "tokenise_image", "private_completion", "private_messages", "list_models",
  "count_tokens", "verify_receipt", "get_receipt", "countersign_receipt", "list_receipts", "receipt_chain_export", "chain_verify",
  "transparency_inclusion", "get_balance", "usage_summary", "key_scopes", "meter", "reconstruct", "engine_info"
]

/** The official MCP client over stdio, talking to `node programs/mcp.ts` started with `env`. */
export const stdioMcpClient = async (env: Record<string, string>): Promise<Client> => {
  const client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: NODE, args: ["programs/mcp.ts"], env: { ...(process.env as Record<string, string>), ...env }, stderr: "pipe" }))
  return client
}

/** `node programs/mcp.ts` with MCP_TRANSPORT=http on a free port; resolves once its listening line names the URL. */
export const startHttpMcpServer = (env: Record<string, string>) =>
  new Promise<{ url: string; pid: number; stop: () => Promise<void> }>((resolve, reject) => {
    const child = spawn(NODE, ["programs/mcp.ts"], { env: { ...process.env, MCP_TRANSPORT: "http", MCP_PORT: "0", ...env }, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    const stop = () => new Promise<void>((done) => {
      if (child.exitCode !== null) return done()
      child.once("exit", () => done())
      child.kill("SIGTERM")
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
      const m = /"url":"([^"]+)"/.exec(stderr)
      if (m !== null) resolve({ url: m[1]!, pid: child.pid!, stop })
    })
    child.once("exit", (code) => reject(new Error(`MCP server exited ${code}: ${stderr}`)))
  })

/** The official MCP client over Streamable HTTP. */
export const httpMcpClient = async (url: string): Promise<Client> => {
  const client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

/** Calls a tool that must succeed; answers its structuredContent. */
export const callOk = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> => {
  const result = await client.callTool({ name, arguments: args })
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`)
  expect((result.content as Array<{ type: string; text: string }>)[0]!.type).toBe("text")
  return result.structuredContent as Record<string, any>
}

/** Calls a tool that must fail with `code` (a tool error, not a protocol error). */
export const callFails = async (client: Client, name: string, args: unknown, code: string | RegExp) => {
  const result = await client.callTool({ name, arguments: args as Record<string, unknown> })
  expect(result.isError).toBe(true)
  const got = errorCodeOf(result)
  if (typeof code === "string") expect(got).toBe(code)
  else expect(got).toMatch(code)
  return (result.content as Array<{ text: string }>)[0]!.text
}
