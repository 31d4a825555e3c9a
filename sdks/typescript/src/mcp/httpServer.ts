/**
 * Streamable HTTP for MCP hosts that connect by URL: `POST /mcp` (and GET/DELETE of the same session) on
 * MCP_HOST:MCP_PORT, one MCP session per `Mcp-Session-Id`, each with its own alias map. Guards, in order:
 * the bearer token (only when serving other machines), the `Origin` (a web page on another site must not drive
 * the tools through the user's browser) and the `Host` on a loopback bind (DNS rebinding). Sessions are bounded
 * (MCP_MAX_SESSIONS) and closed after MCP_SESSION_IDLE_SECONDS without a request, their aliases forgotten.
 */
import { randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { createSessionContext, type SessionContext, type Shared } from "./context.ts"
import { createMcpServer } from "./server.ts"
import { isLoopbackHost } from "./settings.ts"

interface LiveSession {
  readonly transport: StreamableHTTPServerTransport
  readonly context: SessionContext
  lastUsed: number
}

export interface McpHttpServer {
  readonly url: string
  readonly sessions: () => number
  readonly close: () => Promise<void>
}

/** Refusals are JSON-RPC error objects, as MCP clients expect on this endpoint. */
const refuse = (res: ServerResponse, status: number, code: string, message: string) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: `${code}: ${message}`, data: { code } }, id: null }))
}

/** `http(s)://localhost|127.x.x.x|[::1](:port)`: a page served from this device. */
const isLoopbackOrigin = (origin: string): boolean => {
  try {
    const url = new URL(origin)
    const host = url.hostname.replace(/^\[|\]$/g, "")
    return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(host)
  } catch {
    return false
  }
}

const hostOf = (hostHeader: string): string => {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(hostHeader)
  if (m !== null) return m[1]!
  return hostHeader.replace(/:\d+$/, "")
}

const bearerMatches = (header: string | undefined, token: string): boolean => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")
  if (m === null) return false
  const given = Buffer.from(m[1]!)
  const expected = Buffer.from(token)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export const startMcpHttpServer = async (shared: Shared, version: string): Promise<McpHttpServer> => {
  const { settings } = shared
  const sessions = new Map<string, LiveSession>()
  const loopbackBind = isLoopbackHost(settings.host)

  const end = (id: string) => {
    const live = sessions.get(id)
    if (live === undefined) return
    sessions.delete(id)
    live.context.aliases.clear()
    void live.transport.close().catch(() => {})
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (settings.bearerToken !== undefined && !bearerMatches(req.headers.authorization, settings.bearerToken)) {
      return refuse(res, 401, "unauthorized", "Missing or wrong Authorization: Bearer token (MCP_BEARER_TOKEN_FILE).")
    }
    const origin = req.headers.origin
    if (origin !== undefined && !isLoopbackOrigin(origin)) {
      return refuse(res, 403, "origin_not_allowed", `Requests from the web origin ${origin} are refused: only pages of this device (localhost) may call this MCP server.`)
    }
    if (loopbackBind && !isLoopbackHost(hostOf(req.headers.host ?? ""))) {
      return refuse(res, 403, "host_not_allowed", "The Host header must name this device (localhost, 127.0.0.1 or [::1]).")
    }
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") return refuse(res, 404, "not_found", "The MCP endpoint is /mcp.")

    const id = req.headers["mcp-session-id"]
    if (typeof id === "string") {
      const live = sessions.get(id)
      if (live === undefined) return refuse(res, 404, "session_not_found", "Unknown or expired Mcp-Session-Id: initialise a new session.")
      live.lastUsed = Date.now()
      return live.transport.handleRequest(req, res)
    }
    if (req.method !== "POST") return refuse(res, 400, "session_required", "Send initialize with POST /mcp first; later requests carry its Mcp-Session-Id.")
    if (sessions.size >= settings.maxSessions) {
      return refuse(res, 503, "too_many_sessions", `This server holds ${settings.maxSessions} sessions (MCP_MAX_SESSIONS); close one or wait for idle ones to expire.`)
    }
    const context = createSessionContext(shared)
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, context, lastUsed: Date.now() })
      }
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      context.aliases.clear()
    }
    const server = createMcpServer(context, version)
    await server.connect(transport)
    await transport.handleRequest(req, res)
    // Not an initialize request: the transport answered 400 and no session exists; release its server.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close().catch(() => {})
  }

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) refuse(res, 500, "internal_error", `The MCP server failed on this request: ${(error as Error).message}`)
      else res.destroy()
    })
  })
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [id, live] of sessions) if (now - live.lastUsed > settings.sessionIdleMs) end(id)
  }, Math.min(60_000, Math.max(1000, settings.sessionIdleMs / 4)))
  sweep.unref()

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject)
    http.listen(settings.port, settings.host, () => {
      http.off("error", reject)
      resolve()
    })
  })
  const address = http.address() as AddressInfo
  const hostText = address.family === "IPv6" ? `[${address.address}]` : address.address
  return {
    url: `http://${hostText}:${address.port}/mcp`,
    sessions: () => sessions.size,
    close: async () => {
      clearInterval(sweep)
      for (const id of [...sessions.keys()]) end(id)
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    }
  }
}
