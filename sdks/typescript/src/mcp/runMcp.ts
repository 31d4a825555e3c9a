/**
 * The self-hosted MCP server as a program (docs/mcp.md): `privacy-relay mcp` (the package's command) and
 * `node programs/mcp.ts` (the repository's entry point) both run this. stdio by default (the host starts the
 * program); MCP_TRANSPORT=http serves Streamable HTTP at MCP_HOST:MCP_PORT (127.0.0.1:9473) POST /mcp.
 * stdout belongs to the protocol in stdio mode, so every log line goes to stderr, as JSON.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { ProgramHooks } from "../programHooks.ts"
import { createSessionContext, createShared } from "./context.ts"
import { startMcpHttpServer } from "./httpServer.ts"
import { createMcpServer } from "./server.ts"
import { readMcpSettings } from "./settings.ts"

const log = (level: string, message: string, extra: Record<string, unknown> = {}) =>
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), program: "mcp", message, ...extra })}\n`)

/** How long after the handshake the engine starts loading (a host lists the tools right after it). */
const WARM_UP_DELAY_MS = 50

const serve = async (env: Readonly<Record<string, string | undefined>>, hooks: ProgramHooks) => {
  const settings = readMcpSettings(env)
  const shared = createShared(settings)
  const version = shared.engine.version
  if (settings.transport === "stdio") {
    const server = createMcpServer(createSessionContext(shared), version)
    // The engine loads after the handshake (and a moment for the host's tools/list), so neither waits for it.
    server.oninitialized = () => void setTimeout(() => void shared.warmUp(), WARM_UP_DELAY_MS)
    await server.connect(new StdioServerTransport())
    process.stdin.on("end", () => void server.close().finally(() => process.exit(0)))
    return
  }
  const http = await startMcpHttpServer(shared, version)
  log("info", "MCP server listening", { url: http.url, bearer_required: settings.bearerToken !== undefined })
  void shared.warmUp()
  const stop = () => void http.close().finally(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
  hooks.afterStart?.()
}

export const runMcp = (env: Readonly<Record<string, string | undefined>>, hooks: ProgramHooks = {}): Promise<void> =>
  serve(env, hooks).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code
    const message = code === "EADDRINUSE" ? `MCP_HOST:MCP_PORT is in use (${(error as Error).message}); choose another MCP_PORT.` : (error as Error).message
    log("fatal", message, { reason: code === "EADDRINUSE" ? "port_in_use" : "invalid_setting" })
    process.exit(1)
  })
