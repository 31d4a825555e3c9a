/**
 * The starter kit's server: serves the built app and forwards the browser's calls to the gateway with the gateway key
 * added. The key stays here (the browser never sees it); the content stays in the browser: the page tokenises and
 * attests every call on the device, and this server forwards only requests that carry the engine's attestation, byte
 * for byte, so it relays aliases, never the originals (the gateway checks the attestation against the exact body).
 *
 * Forwarded: the gateway identity probe and receipt keys (JWKS), the model list, chat completions and messages.
 * Nothing else of the gateway is reachable through it. It logs one line per request (method, path, status, time),
 * never a body, a header or the key.
 *
 * `node server.ts` in a fork (in this repository `node --conditions=privacy-relay-repo starter-kit/server.ts`, see
 * docs/decisions.md) with GATEWAY_URL, GATEWAY_KEY_FILE, optional STARTER_HOST (127.0.0.1), STARTER_PORT
 * (5173), STARTER_APP_DIR (starter-kit/dist) and STARTER_ALLOWED_HOSTS (the host names it answers to; required when
 * it listens on an address other than loopback): the schema is settings.ts.
 */
import { createReadStream, existsSync, statSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { extname, join, normalize, sep } from "node:path"
import { Readable } from "node:stream"
import { Settings } from "@privacy-relay/sdk/wire"
import { readGatewayKeyFile, StarterConfigError } from "./gatewayKeyFile.ts"
import { readStarterSettings, type StarterSettings } from "./settings.ts"

export interface StarterServerOptions {
  readonly gatewayUrl: string
  readonly keyFile: string
  /** The built app (vite build output). */
  readonly appDir: string
  readonly host?: string
  /** 0 for an ephemeral port. */
  readonly port?: number
  /** Largest request body forwarded (default 20 MiB). */
  readonly maxBodyBytes?: number
  /** Access log lines (default: stdout). */
  readonly log?: (line: string) => void
  /**
   * Host names (the Host header, without the port) this server answers to. Default on a loopback address:
   * localhost, 127.0.0.1 and [::1]. Required on any other address (the names your users reach it by).
   */
  readonly allowedHosts?: ReadonlyArray<string>
}

export interface StarterServer {
  readonly url: string
  readonly close: () => Promise<void>
}

const JWKS_PATH = "/api/.well-known/service-receipt-pubkeys.jwks"
const MODELS_PATH = "/api/v1/models"
const RELAY_PATHS = new Set(["/api/v1/chat/completions", "/api/v1/messages"])

/** Request headers passed on to the gateway; everything else the browser sent (cookies, origin, ...) stays here. */
const FORWARDED_REQUEST_HEADERS = ["content-type", "accept", "x-service-engine", "x-service-attestation", "idempotency-key", "traceparent", "tracestate", "anthropic-version"]
/** Answer headers passed back: what the SDK reads (ids, receipts, rate limits). */
const FORWARDED_ANSWER_HEADERS = [
  "content-type",
  "cache-control",
  "x-request-id",
  "x-service-receipt-v2",
  "x-service-receipt-v2-jti",
  "x-service-receipt-failed",
  "x-service-receipt-v3",
  "x-service-idempotent-replay",
  "retry-after",
  "ratelimit",
  "ratelimit-policy"
]

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2"
}

/** The page may talk only to this server and run only its own scripts. */
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin"
}

const sendError = (res: ServerResponse, status: number, code: string, message: string) => {
  const body = JSON.stringify({ error: { code, message, type: code } })
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...SECURITY_HEADERS }).end(body)
}

class BodyTooLarge extends Error {}

const readBody = async (req: IncomingMessage, limit: number): Promise<Buffer> => {
  const declared = Number(req.headers["content-length"] ?? "0")
  if (declared > limit) throw new BodyTooLarge()
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw new BodyTooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * A call from another site would spend this server's key: only the page's own origin may call. Browsers send
 * Origin on every POST and Sec-Fetch-Site on every request; the attestation header also forces a CORS preflight,
 * which this server never grants.
 */
const isSameOrigin = (req: IncomingMessage): boolean => {
  const site = req.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return false
  const origin = req.headers.origin
  if (origin === undefined) return true
  try {
    return new URL(origin).host === req.headers.host
  } catch {
    return false
  }
}

/** The Host header's name without its port, lower-cased ("[::1]:5173" -> "[::1]"). */
const hostName = (host: string | undefined): string => (host ?? "").toLowerCase().replace(/:\d+$/, "")

export const startStarterServer = async (options: StarterServerOptions): Promise<StarterServer> => {
  const gatewayUrl = Settings.parseGatewayUrl(options.gatewayUrl)
  const bind = options.host ?? "127.0.0.1"
  // A page on another site can point its own name at this machine (DNS rebinding) and would then be "same-origin":
  // answering only to known host names stops it from spending the key.
  const allowedHosts = new Set((options.allowedHosts ?? (Settings.isLoopbackHost(bind) ? ["localhost", "127.0.0.1", "[::1]"] : [])).map((h) => h.toLowerCase()))
  if (allowedHosts.size === 0) {
    throw new StarterConfigError(`STARTER_ALLOWED_HOSTS is not set: on ${bind} (not loopback) name the host names users reach this server by, e.g. chat.example.com.`)
  }
  const key = readGatewayKeyFile(options.keyFile)
  const appDir = normalize(options.appDir)
  if (!existsSync(join(appDir, "index.html"))) {
    throw new StarterConfigError(`The app is not built: ${join(appDir, "index.html")} is missing (run npm run starter, or node starter-kit/build.ts).`)
  }
  const maxBodyBytes = options.maxBodyBytes ?? 20 * 1024 * 1024
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`))

  const forward = async (req: IncomingMessage, res: ServerResponse, path: string, withKey: boolean, body: Buffer | undefined) => {
    const headers: Record<string, string> = {}
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name]
      if (typeof value === "string") headers[name] = value
    }
    if (withKey) headers.authorization = `Bearer ${key}`
    // The browser stopping (the stop button, a closed tab) cancels the gateway call, which cancels the provider's.
    const abort = new AbortController()
    res.on("close", () => abort.abort())
    let answer: Response
    try {
      answer = await fetch(`${gatewayUrl}${path}`, {
        method: req.method,
        headers,
        ...(body === undefined ? {} : { body: new Uint8Array(body) }),
        redirect: "error",
        signal: abort.signal
      })
    } catch {
      if (!abort.signal.aborted) sendError(res, 502, "gateway_unreachable", "The gateway could not be reached from the starter kit's server.")
      return
    }
    const out: Record<string, string> = { ...SECURITY_HEADERS }
    for (const name of FORWARDED_ANSWER_HEADERS) {
      const value = answer.headers.get(name)
      if (value !== null) out[name] = value
    }
    res.writeHead(answer.status, out)
    if (answer.body === null) return void res.end()
    Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream<Uint8Array>)
      .on("error", () => res.destroy())
      .pipe(res)
  }

  const serveFile = (res: ServerResponse, path: string) => {
    const relative = path === "/" ? "index.html" : decodeURIComponent(path).replace(/^\/+/, "")
    const file = normalize(join(appDir, relative))
    if (!file.startsWith(appDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      return sendError(res, 404, "not_found", "Not found.")
    }
    const immutable = file.startsWith(join(appDir, "assets") + sep)
    res.writeHead(200, {
      "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": statSync(file).size,
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      ...SECURITY_HEADERS
    })
    createReadStream(file).pipe(res)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!allowedHosts.has(hostName(req.headers.host))) return sendError(res, 421, "host_not_allowed", "This server does not answer to that host name.")
    const path = new URL(req.url ?? "/", "http://starter.local").pathname
    if (path === JWKS_PATH && req.method === "GET") return forward(req, res, path, false, undefined)
    if (path === MODELS_PATH && req.method === "GET") {
      if (!isSameOrigin(req)) return sendError(res, 403, "cross_origin_refused", "Only this app's own pages may call its server.")
      return forward(req, res, path, true, undefined)
    }
    if (RELAY_PATHS.has(path)) {
      if (req.method !== "POST") return sendError(res, 405, "method_not_allowed", `${path} takes POST.`)
      if (!isSameOrigin(req)) return sendError(res, 403, "cross_origin_refused", "Only this app's own pages may call its server.")
      if (typeof req.headers["x-service-engine"] !== "string" || typeof req.headers["x-service-attestation"] !== "string") {
        return sendError(res, 400, "not_tokenised", "This server forwards only calls tokenised and attested on the device (X-Service-Engine and X-Service-Attestation); nothing was forwarded.")
      }
      let body: Buffer
      try {
        body = await readBody(req, maxBodyBytes)
      } catch (error) {
        if (error instanceof BodyTooLarge) return sendError(res, 413, "payload_too_large", `The request is larger than ${maxBodyBytes} bytes; nothing was forwarded.`)
        return void res.destroy()
      }
      return forward(req, res, path, true, body)
    }
    if (path.startsWith("/api/")) return sendError(res, 404, "not_found", "The starter kit's server forwards only the chat routes, the model list and the receipt keys.")
    if (req.method !== "GET" && req.method !== "HEAD") return sendError(res, 405, "method_not_allowed", "Only GET here.")
    return serveFile(res, path)
  }

  const server: Server = createServer((req, res) => {
    const started = performance.now()
    res.on("finish", () => log(JSON.stringify({ method: req.method, path: (req.url ?? "").split("?")[0], status: res.statusCode, ms: Math.round(performance.now() - started) })))
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 500, "internal_error", "The starter kit's server failed on this request.")
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 5173, bind, () => resolve())
  })
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * npm runs `npm run starter` as `sh -c "..."` and signals only that shell, which dies without passing the signal on:
 * the server would be left running on its port. Started by an npm script (npm sets npm_lifecycle_event), the server
 * stops as on SIGTERM once the process that started it is gone. (A copy of sdks/typescript/src/wire/node/stopWithParent.ts: a fork of
 * the starter kit depends on nothing but the published SDK.)
 */
const stopWithParent = (): void => {
  if (process.env.npm_lifecycle_event === undefined || process.ppid <= 1) return
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    process.kill(process.pid, "SIGTERM")
  }, 250)
  timer.unref()
}

/** A start that cannot go on: one JSON line on stderr (the server's log format), exit status 1. */
const failStart = (message: string): never => {
  console.error(JSON.stringify({ level: "error", msg: message }))
  return process.exit(1)
}

/**
 * Every setting from the environment (settings.ts), checked before anything starts (`npm run starter` reads them
 * before it builds the app): a bad value is one line naming the variable and what it allows, and exit status 1.
 */
export const settingsFromEnvironment = (): StarterSettings => {
  try {
    return readStarterSettings(process.env)
  } catch (error) {
    return error instanceof Settings.ConfigInvalid ? failStart(error.message) : failStart(`The starter kit could not start: ${(error as Error).message}`)
  }
}

/** The server as `node starter-kit/server.ts` runs it: `settings` from the environment; SIGINT/SIGTERM close it. */
export const serveFromEnvironment = async (settings: StarterSettings = settingsFromEnvironment()): Promise<void> => {
  try {
    const server = await startStarterServer({
      gatewayUrl: settings.gatewayUrl,
      keyFile: settings.keyFile ?? "",
      appDir: settings.appDir,
      host: settings.host,
      port: settings.port,
      ...(settings.allowedHosts === undefined ? {} : { allowedHosts: settings.allowedHosts })
    })
    console.log(JSON.stringify({ msg: "starter kit listening", url: server.url, gateway: settings.gatewayUrl }))
    const stop = () => void server.close().then(() => process.exit(0))
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
    stopWithParent()
  } catch (error) {
    failStart(error instanceof StarterConfigError || error instanceof Settings.ConfigInvalid ? error.message : `The starter kit could not start: ${(error as Error).message}`)
  }
}

if (process.argv[1] === import.meta.filename) await serveFromEnvironment()
