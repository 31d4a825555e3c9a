/**
 * The local proxy's HTTP server (node:http; Node-only). Any OpenAI or Anthropic client points its base
 * URL here. For each request, and with nothing kept between requests: tokenise the user text on this
 * device, sign a v3 attestation of the exact bytes, send only those bytes to the gateway with the
 * engine and attestation headers, and put this request's originals back into the answer.
 *
 * Routes: POST /v1/chat/completions, POST /v1/messages, POST /v1/messages/count_tokens, POST /v1/responses,
 * POST /v1/embeddings, GET /v1/models, GET /healthz.
 * Errors use the gateway's envelope `{ "error": { "code", "message" } }`, on /v1/messages (and its count_tokens)
 * Anthropic's error shape (anthropicError.ts), for the proxy's own errors and the gateway's alike.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { nodeAttestationSigning } from "../client/nodeAttestationSigning.ts"
import { ProxyStartError } from "../client/ProxyStartError.ts"
import { type Engine, prepareCall } from "../engine.ts"
import { EgressRefusedError, InvalidRequestError, NameModelUnavailableError } from "../errors.ts"
import { EgressRefusal, egressRefusalStatus } from "../wire/egressPolicy.ts"
import { FileError } from "../files/FileError.ts"
import type { FileLimits } from "../files/limits.ts"
import { isStreamed, RELAY_PATHS, relayRequestInit, restoredStream, restoredText } from "../relayExchange.ts"
import { idempotentAliasSecret } from "../tokeniser/idempotentAliasSecret.ts"
import { engineHeaderValue, type AttestationRoute, type EngineIdentity } from "../wire/attestation/v3.ts"
import { MAX_REQUEST_BODY_BYTES } from "../wire/bodyLimit.ts"
import { lingerAfterAnswer } from "../wire/node/lingeringClose.ts"
import { anthropicErrorBody, anthropicErrorText } from "./anthropicError.ts"
import { answerOfResponse, type GatewayAnswer, isOk } from "./gatewayAnswer.ts"
import { type GatewayRequest, undiciGatewayFetch } from "./gatewayFetch.ts"
import { consoleLog, type ProxyLog } from "./proxyLog.ts"
import type { RequestTokeniser } from "./RequestTokeniser.ts"

export interface ProxyDependencies {
  /** Checked gateway base URL (parseGatewayUrl + probeGateway), no trailing slash. */
  readonly gatewayUrl: string
  /** The gateway key (`svc_...`); clients' own Authorization / x-api-key values are ignored. */
  readonly gatewayKey: string
  /** The device attester key pair that signs the v3 attestations. */
  readonly deviceKey: CryptoKeyPair
  readonly engine: EngineIdentity
  /**
   * Tokenises request bodies (workerTokeniser in the proxy; a failing name model refuses the request,
   * fail-closed). The server does not close it.
   */
  readonly tokeniser: RequestTokeniser
  /** Used for every call to the gateway (tests observe egress through it). */
  readonly fetch?: typeof fetch
  /** How long one gateway call may take. Default 300 s (model answers can be slow). */
  readonly gatewayTimeoutMs?: number
  /**
   * How long tokenising one request may take before it is refused (422 `tokenisation_timeout`, nothing
   * sent). Default DEFAULT_TOKENISE_TIMEOUT_MS.
   */
  readonly tokeniseTimeoutMs?: number
  /** Largest body taken from a client and sent to the gateway. Default: the gateway's, MAX_REQUEST_BODY_BYTES. */
  readonly maxBodyBytes?: number
  /** Where the access log goes. Default: JSON lines on stdout (consoleLog). */
  readonly log?: ProxyLog
  /**
   * Limits for attached files (OpenAI `file` parts, Anthropic `document` blocks), read and tokenised here. Default:
   * 20 MB per file; the whole request, files included, still has to fit in `maxBodyBytes`.
   */
  readonly fileLimits?: Partial<FileLimits>
  /** `stream: true` streams (default); false answers 501 `stream_not_supported` (PROXY_STREAMING=off). */
  readonly streaming?: boolean
  /**
   * The device-held alias secret. A request with an Idempotency-Key is tokenised under a secret derived from it and
   * the key (idempotentAliasSecret), so a retry sends the same bytes and the gateway replays the first answer; the
   * header is then forwarded. Absent: Idempotency-Key is not forwarded (a retry's bytes would differ).
   */
  readonly aliasSecret?: Uint8Array
}

/** Default time budget for tokenising one request: a request at the size limit fits in it on a slow laptop. */
export const DEFAULT_TOKENISE_TIMEOUT_MS = 60_000

export interface RunningProxyServer {
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
}


const RELAY_ROUTES: Readonly<Record<string, { readonly route: AttestationRoute }>> = {
  "/v1/chat/completions": { route: "chat.completions" },
  "/v1/messages": { route: "messages" },
  "/v1/messages/count_tokens": { route: "messages.count_tokens" },
  "/v1/responses": { route: "responses" },
  "/v1/embeddings": { route: "embeddings" }
}

/** The routes that answer in Anthropic's error shape. */
const isAnthropicRoute = (route: AttestationRoute | undefined): boolean => route === "messages" || route === "messages.count_tokens"

/**
 * Client headers worth carrying to the gateway: correlation and tracing only, never credentials. Idempotency-Key goes
 * too when the proxy holds an alias secret to make its retries byte-identical (ProxyDependencies.aliasSecret).
 */
const FORWARDED_REQUEST_HEADERS = ["x-request-id", "traceparent", "tracestate"]

/** Gateway response headers the client gets: receipts, request id, replays, and what a client needs to back off. */
const passesBack = (name: string): boolean =>
  name.startsWith("x-service-receipt") ||
  name === "x-request-id" ||
  name === "idempotency-replayed" ||
  name === "retry-after" ||
  name === "ratelimit" ||
  name === "ratelimit-policy"

class ProxyHttpError extends Error {
  readonly status: number
  readonly code: string
  /** Close the connection after answering: the client may still be sending a body nobody will read. */
  readonly closeConnection: boolean
  /** The error's `details` (an egress refusal's path, media kind and the setting that allows it). */
  readonly details: Readonly<Record<string, string>> | undefined
  constructor(
    status: number,
    code: string,
    message: string,
    options: { readonly closeConnection?: boolean; readonly details?: Readonly<Record<string, string>> } = {}
  ) {
    super(message)
    this.status = status
    this.code = code
    this.closeConnection = options.closeConnection ?? false
    this.details = options.details
  }
}

const tooLarge = (limit: number, what: string) =>
  new ProxyHttpError(
    413,
    "payload_too_large",
    `${what} is larger than ${limit} bytes (${limit / (1024 * 1024)} MiB), the gateway's limit; it was not sent. Send a shorter request.`,
    { closeConnection: true }
  )

/** The client closed its connection before its answer: nobody to answer, and the work stops. */
class ClientGone extends Error {
  constructor() {
    super("the client closed the connection")
    this.name = "ClientGone"
  }
}

/** Aborted (with ClientGone) when the client's connection closes before it has its whole answer. */
const clientGoneSignal = (res: ServerResponse): AbortSignal => {
  const client = new AbortController()
  res.once("close", () => {
    if (!res.writableFinished) client.abort(new ClientGone())
  })
  return client.signal
}

/**
 * A signal aborted when `parent` is (with its reason) or after `ms` (with a TimeoutError), whose timer is cleared by
 * `clear()` and at the latest when the response closes. AbortSignal.timeout + AbortSignal.any left both timers of
 * every call (60 s and 300 s) pending after its answer until the garbage collector reclaimed their signals (a
 * finalization entry each), plus composite signals to follow (issue 24: the proxy's CPU per call).
 */
const limitedSignal = (parent: AbortSignal, ms: number, res: ServerResponse): { readonly signal: AbortSignal; readonly clear: () => void } => {
  const controller = new AbortController()
  const onParent = () => controller.abort(parent.reason)
  const timer = setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), ms)
  // Like AbortSignal.timeout's: a pending limit does not keep the process alive on its own.
  timer.unref()
  if (parent.aborted) onParent()
  else parent.addEventListener("abort", onParent, { once: true })
  const clear = () => {
    clearTimeout(timer)
    parent.removeEventListener("abort", onParent)
  }
  res.once("close", clear)
  return { signal: controller.signal, clear }
}

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text))
  })
  res.end(text)
}

/** Our envelope, or on the Anthropic route Anthropic's error shape (anthropicError.ts). */
const sendError = (res: ServerResponse, error: ProxyHttpError, anthropic: boolean) =>
  sendJson(
    res,
    error.status,
    anthropic
      ? anthropicErrorBody(error.status, error.code, error.message, error.details === undefined ? {} : { details: error.details })
      : { error: { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) } },
    error.closeConnection ? { connection: "close" } : {}
  )

/**
 * The request body, refused (413) before a byte is read when its Content-Length is over `limit`, and as
 * soon as it grows past `limit` when it has none (chunked): nothing over the limit is buffered.
 */
const readBody = (req: IncomingMessage, limit: number): Promise<Buffer> => {
  const declared = req.headers["content-length"]
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit, "the request body"))
  // Listeners rather than an async iterator (a promise and an iterator result per chunk; issue 41: the proxy's CPU per
  // call). Not destroyed on the early exit: the connection stays up to carry the 413 (lingerAfterAnswer).
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("close", onClose)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        stop()
        // The rest of the body is not wanted; lingerAfterAnswer reads it, bounded, after the 413 is written.
        req.pause()
        reject(tooLarge(limit, "the request body"))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
    }
    const onError = (error: Error) => {
      stop()
      reject(error)
    }
    // The client went away before the end of its body: nobody to answer.
    const onClose = () => {
      stop()
      reject(new ClientGone())
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("close", onClose)
  })
}

/** The request's path; an unparsable request target is a path no route has. */
const pathOf = (url: string | undefined): string => {
  // A route's own path, as every client sends it, is its path: no URL object to parse it (issue 41).
  if (url !== undefined && Object.hasOwn(RELAY_ROUTES, url)) return url
  try {
    return new URL(url ?? "/", "http://proxy.local").pathname
  } catch {
    return "(unparsable)"
  }
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i

/**
 * Only local clients may use the proxy's key. A web page in the user's browser could otherwise POST
 * here (its Origin is foreign) or reach it through DNS rebinding (its Host is a foreign name).
 */
const checkLocalCaller = (req: IncomingMessage, boundHost: string): void => {
  const host = req.headers.host ?? ""
  const hostName = host.replace(/:\d+$/, "")
  if (host !== "" && !LOOPBACK_HOST.test(host) && hostName !== boundHost) {
    throw new ProxyHttpError(403, "host_not_allowed", `Host ${host} is not this local proxy`)
  }
  const origin = req.headers.origin
  if (origin !== undefined && origin !== "null") {
    let originHost = ""
    try {
      originHost = new URL(origin).host
    } catch {
      // unparsable origin: refused below
    }
    if (!LOOPBACK_HOST.test(originHost)) {
      throw new ProxyHttpError(403, "origin_not_allowed", `requests from web origin ${origin} are refused`)
    }
  }
}

export const createProxyRequestHandler = (deps: ProxyDependencies, boundHost: string) => {
  // Without a fetch of the caller's, the proxy's own keep-alive pool to the gateway (closed with the server).
  const ownFetch = deps.fetch === undefined ? undiciGatewayFetch() : undefined
  const timeoutMs = deps.gatewayTimeoutMs ?? 300_000
  const tokeniseTimeoutMs = deps.tokeniseTimeoutMs ?? DEFAULT_TOKENISE_TIMEOUT_MS
  const maxBodyBytes = deps.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES
  const engineHeader = engineHeaderValue(deps.engine)

  /** The gateway's time limit covers the whole exchange (a stream included); its timer stops when the response closes. */
  const callGateway = async (path: string, init: Omit<GatewayRequest, "signal">, clientGone: AbortSignal, res: ServerResponse): Promise<GatewayAnswer> => {
    const url = `${deps.gatewayUrl}${path}`
    const signal = limitedSignal(clientGone, timeoutMs, res).signal
    try {
      if (ownFetch !== undefined) return await ownFetch.exchange(url, { ...init, signal })
      return answerOfResponse(await deps.fetch!(url, { ...init, body: init.body as Uint8Array<ArrayBuffer> | string | undefined, redirect: "error", signal }))
    } catch (error) {
      if (clientGone.aborted) throw clientGone.reason
      throw new ProxyHttpError(502, "gateway_unreachable", `the gateway ${deps.gatewayUrl} did not answer: ${(error as Error).message}`)
    }
  }

  /** The gateway's request id of each answer, for the access log. */
  const gatewayRequestIds = new WeakMap<ServerResponse, string>()

  const passBackHeaders = (answer: GatewayAnswer, res: ServerResponse): Record<string, string> => {
    const headers: Record<string, string> = {}
    for (const name in answer.headers) {
      if (passesBack(name)) headers[name] = answer.headers[name]!
    }
    const requestId = answer.headers["x-request-id"]
    if (requestId !== undefined) gatewayRequestIds.set(res, requestId)
    return headers
  }

  /**
   * The SDK's engine with the proxy's tokeniser (worker threads, which hold the name model and the stable-alias
   * secret): the same read-files, tokenise and attest path as every SDK call.
   */
  const engine: Engine = {
    identity: deps.engine,
    deviceKey: async () => deps.deviceKey,
    names: "off",
    stableAliasSecret: undefined,
    attestationSigning: nodeAttestationSigning,
    ...(deps.fileLimits === undefined ? {} : { fileLimits: deps.fileLimits }),
    tokenise: async (route, body, signal, callSecret) => {
      const tokenised = await deps.tokeniser.tokenise(route, body, signal ?? new AbortController().signal, callSecret)
      // Aliases can be longer than the values they replace: the gateway would refuse what grew past its limit.
      if (tokenised.bodyBytes.byteLength > maxBodyBytes) throw tooLarge(maxBodyBytes, "the tokenised request body")
      return tokenised
    }
  }

  /**
   * Reads attached files, tokenises the request body on this device and attests it, within the time budget and only
   * while the client is still there: a client that goes away stops the work at the next window of text.
   */
  const prepare = async (route: AttestationRoute, body: unknown, clientGone: AbortSignal, res: ServerResponse, aliasSecret: Uint8Array | undefined) => {
    const budget = limitedSignal(clientGone, tokeniseTimeoutMs, res)
    try {
      return await prepareCall(engine, route, body, { signal: budget.signal, ...(aliasSecret === undefined ? {} : { aliasSecret }) })
    } catch (error) {
      if (budget.signal.aborted && !clientGone.aborted) {
        throw new ProxyHttpError(
          422,
          "tokenisation_timeout",
          `tokenising this request took longer than ${tokeniseTimeoutMs} ms; it was not sent (fail-closed). Send a shorter request, or raise TOKENISE_TIMEOUT_MS.`
        )
      }
      if (error instanceof NameModelUnavailableError) {
        throw new ProxyHttpError(
          503,
          "name_model_unavailable",
          `the name model is unavailable (${(error.cause as Error).message}); the request was not sent (fail-closed). Fix the NAME_MODEL endpoint, or set NAME_MODEL=off or builtin.`
        )
      }
      // The egress policy refused a field, a part type or media: nothing was sent (fail-closed per field).
      if (error instanceof EgressRefusedError && error.cause instanceof EgressRefusal) {
        throw new ProxyHttpError(egressRefusalStatus(error.cause.code), error.code, error.message, { details: error.cause.details })
      }
      if (error instanceof InvalidRequestError) throw new ProxyHttpError(400, "invalid_request", error.message)
      // An attached file that cannot be read refuses the request.
      if (error instanceof FileError) throw new ProxyHttpError(error.httpStatus, error.code, error.message)
      throw error
    } finally {
      budget.clear()
    }
  }

  const relay = async (req: IncomingMessage, res: ServerResponse, target: (typeof RELAY_ROUTES)[string]) => {
    const client = clientGoneSignal(res)
    const raw = await readBody(req, maxBodyBytes)
    let body: unknown
    try {
      body = JSON.parse(raw.toString("utf8"))
    } catch {
      throw new ProxyHttpError(400, "invalid_request", "request body must be JSON")
    }
    const stream = isStreamed(target.route, body)
    if (stream && deps.streaming === false) {
      throw new ProxyHttpError(
        501,
        "stream_not_supported",
        "stream: true is switched off on this local proxy (PROXY_STREAMING=off); send the request without stream (or stream: false)"
      )
    }
    // Attached files are read here (prepareCall) and become text parts; a file that cannot be read refuses the request.
    const idempotencyKey = deps.aliasSecret === undefined ? undefined : req.headers["idempotency-key"]
    const aliasSecret = typeof idempotencyKey === "string" ? await idempotentAliasSecret(deps.aliasSecret!, idempotencyKey) : undefined
    const prepared = await prepare(target.route, body, client, res, aliasSecret)
    const forwarded: Record<string, string> = {}
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name]
      if (typeof value === "string") forwarded[name] = value
    }
    if (typeof idempotencyKey === "string") forwarded["idempotency-key"] = idempotencyKey
    const request = relayRequestInit(prepared, { apiKey: deps.gatewayKey, stream, headers: forwarded })
    const answer = await callGateway(
      RELAY_PATHS[target.route],
      { method: "POST", headers: request.headers as Record<string, string>, body: prepared.bodyBytes },
      client,
      res
    )
    // A 2xx answer gets this request's originals back (a stream frame by frame). Errors carry no user content (the
    // gateway is content-blind), so they pass through, on the Anthropic route in Anthropic's error shape.
    const ok = isOk(answer)
    if (stream && ok) return relayStream(res, answer, restoredStream(target.route, prepared.map, answer.stream()), client)
    const text = await answer.text()
    const out = ok ? restoredText(text, prepared.map) : isAnthropicRoute(target.route) ? anthropicErrorText(answer.status, text) : text
    res.writeHead(answer.status, {
      ...passBackHeaders(answer, res),
      "content-type": answer.headers["content-type"] ?? "application/json",
      "content-length": String(Buffer.byteLength(out))
    })
    res.end(out)
  }

  /**
   * Passes a streamed answer on as it arrives, frame by frame, with this request's originals restored (an alias cut
   * across frames included) and the gateway's `receipt-v2` trailer passed on unchanged. A client that goes away
   * cancels the gateway stream; a malformed frame from the gateway ends the stream (the status is already sent).
   */
  const relayStream = async (res: ServerResponse, answer: GatewayAnswer, restored: ReadableStream<Uint8Array>, client: AbortSignal) => {
    res.writeHead(answer.status, {
      ...passBackHeaders(answer, res),
      "content-type": answer.headers["content-type"] ?? "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no"
    })
    const reader = restored.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        res.write(value)
      }
    } catch (error) {
      await reader.cancel().catch(() => {})
      if (client.aborted) return
      log("WARN", "stream from the gateway ended badly", { error: (error as Error).message })
    } finally {
      res.end()
    }
  }

  /**
   * The gateway's list for the proxy's key, passed back as it answers (an unreachable gateway is a 502
   * `gateway_unreachable`, as on the relay routes). The proxy has no catalogue of its own: the gateway's list is the
   * one that names what this key can call.
   */
  const models = async (res: ServerResponse) => {
    // As on the relay routes: a client that leaves cancels the gateway call.
    const answer = await callGateway("/api/v1/models", { method: "GET", headers: { authorization: `Bearer ${deps.gatewayKey}`, accept: "application/json" } }, clientGoneSignal(res), res)
    const text = await answer.text()
    res.writeHead(answer.status, {
      ...passBackHeaders(answer, res),
      "content-type": answer.headers["content-type"] ?? "application/json",
      "content-length": String(Buffer.byteLength(text)),
      "x-proxy-models-source": "gateway"
    })
    res.end(text)
  }

  const log = deps.log ?? consoleLog

  /**
   * One access-log line per request once its connection is done with it: method, route, status, duration,
   * the gateway's request id and the proxy's own error code. Never the body, the path of an unknown route,
   * headers, values or aliases. A client that left before its answer is logged with status 499.
   */
  const logRequest = (req: IncomingMessage, res: ServerResponse, route: string, started: number, code: () => string | undefined) =>
    res.once("close", () => {
      log("INFO", "request", {
        method: req.method ?? "",
        route,
        status: res.writableFinished ? res.statusCode : 499,
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
        request_id: gatewayRequestIds.get(res) ?? null,
        code: code() ?? null
      })
    })

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now()
    const path = pathOf(req.url)
    const relayTarget = Object.hasOwn(RELAY_ROUTES, path) ? RELAY_ROUTES[path] : undefined
    const known = relayTarget !== undefined || path === "/v1/models" || path === "/healthz"
    let errorCode: string | undefined
    logRequest(req, res, known ? path : "(unknown)", started, () => errorCode)
    try {
      checkLocalCaller(req, boundHost)
      if (relayTarget !== undefined) {
        if (req.method !== "POST") throw new ProxyHttpError(405, "method_not_allowed", `${path} accepts POST only`)
        return await relay(req, res, relayTarget)
      }
      if (path === "/v1/models") {
        if (req.method !== "GET") throw new ProxyHttpError(405, "method_not_allowed", `${path} accepts GET only`)
        return await models(res)
      }
      if (path === "/healthz") {
        if (req.method !== "GET") throw new ProxyHttpError(405, "method_not_allowed", `${path} accepts GET only`)
        return sendJson(res, 200, { status: "ok", engine: engineHeader, gateway: deps.gatewayUrl })
      }
      throw new ProxyHttpError(404, "not_found", `no route ${req.method} ${path} on the local proxy`)
    } catch (error) {
      if (res.headersSent || error instanceof ClientGone) {
        res.destroy()
        return
      }
      // Unexpected: answer without details (they could include request content) and send nothing upstream.
      const answer = error instanceof ProxyHttpError ? error : new ProxyHttpError(500, "proxy_error", "the local proxy failed to handle the request")
      errorCode = answer.code
      // Answered before the body was read (413): read the rest, bounded, before closing, or the client still writing
      // gets a reset instead of the answer.
      if (answer.closeConnection) lingerAfterAnswer(req, res)
      sendError(res, answer, isAnthropicRoute(relayTarget?.route))
    }
  }
  /** Closes the proxy's own connections to the gateway (none when the caller gave its fetch). */
  const close = async (): Promise<void> => {
    await ownFetch?.close()
  }
  return Object.assign(handle, { close })
}

/**
 * Listens on host:port exactly. A taken port is a ProxyStartError; the proxy never moves to another
 * port, because clients are configured with this one.
 */
export const listenProxyServer = (deps: ProxyDependencies, host: string, port: number): Promise<RunningProxyServer> =>
  new Promise((resolve, reject) => {
    const handler = createProxyRequestHandler(deps, host)
    const server: Server = createServer((req, res) => void handler(req, res))
    server.once("error", (error: NodeJS.ErrnoException) => {
      void handler.close()
      if (error.code === "EADDRINUSE") {
        reject(
          new ProxyStartError(
            `${host}:${port} is already in use (another proxy running?). Stop that process or choose another port with PROXY_PORT (and point your client's base URL at it); the proxy never moves to a different port by itself.`,
            "port_in_use"
          )
        )
      } else if (error.code === "EACCES") {
        reject(new ProxyStartError(`not allowed to listen on ${host}:${port}; choose another port with PROXY_PORT.`, "port_forbidden"))
      } else {
        reject(new ProxyStartError(`cannot listen on ${host}:${port}: ${error.message}`, "host_unavailable"))
      }
    })
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address() as AddressInfo
      const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address
      resolve({
        url: `http://${urlHost}:${address.port}`,
        port: address.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => void handler.close().finally(() => done()))
            server.closeAllConnections()
          })
      })
    })
  })
