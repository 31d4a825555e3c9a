/**
 * The Privacy Relay client: every relay call is tokenised and attested on this device, sent to the gateway, and
 * answered with the originals restored here (streams too). Gateway-locked: it talks only to an https (or loopback)
 * URL that answers the gateway identity probe. Runtime specifics (files, the device key) come from a Platform, so
 * the same class serves Node, Deno and browsers (see index.ts and browser.ts).
 */
import type { AttestationRoute, EngineIdentity } from "./wire/attestation/v3.ts"
import { detokeniseResponseText } from "./client/detokeniseResponse.ts"
import { parseGatewayUrl, probeGatewayKeys } from "./client/gatewayUrl.ts"
import { ProxyStartError } from "./client/ProxyStartError.ts"
import type { VerificationResult } from "./wire/receipts/verify.ts"
import { callAliasSecret, type Engine, nameModelOf, type NameModelSetting, prepareCall, type PreparedCall } from "./engine.ts"
import { builtinNameModel } from "./tokeniser/builtinNameModel.ts"
import type { ImageRedactor, MediaPolicy } from "./tokeniser/tokeniseRequest.ts"
import { FileError } from "./files/FileError.ts"
import type { FileLimits } from "./files/limits.ts"
import { ConfigurationError, EgressRefusedError, errorFromAnswer, GatewayIdentityError, RelayError, StreamError } from "./errors.ts"
import type { Platform } from "./platform.ts"
import { isStreamed, RELAY_PATHS, relayRequestInit, restoredAnswer } from "./relayExchange.ts"
import { RestApi } from "./rest.ts"
import { Conversation } from "./conversation.ts"
import { createSseDetokeniser, type SseEvent, type StreamRoute } from "./sseDetokeniser.ts"
import { createTransport, DEFAULT_RETRY_POLICY, newTraceparent, type Transport } from "./transport.ts"
import { createJwksCache, type JwksCache } from "./verify/jwks.ts"
import { verifyReceipt } from "./verify/receipt.ts"
import { anthropicErrorBody } from "./wire/anthropicError.ts"

export interface RelayClientOptions {
  /** The gateway's base URL: https, or http to a loopback address for development. */
  readonly gatewayUrl: string
  /** The gateway key (`svc_...`). Prefer `apiKeyFile` on servers: a key in code or argv leaks. */
  readonly apiKey?: string
  /** A file (mode 0600) holding the gateway key (Node and Deno). */
  readonly apiKeyFile?: string
  /**
   * The gateway key is added by a server of the application between this client and the gateway (a web page that
   * must not hold the key: `gatewayUrl` is that server, which forwards the tokenised, attested calls). Relay calls
   * and the model list then go out with no Authorization header. Not with `apiKey` or `apiKeyFile`.
   */
  readonly keyHeldByServer?: boolean
  /** A portal token (`spt_...`) for the portal operations (keys, receipts list, webhooks, billing). */
  readonly portalToken?: string
  /** `builtin` (default), `off`, or the URL of a name model service. Fail-closed: if it fails, nothing is sent. */
  readonly nameModel?: NameModelSetting
  /** Retries after the first attempt on 429, 5xx and network errors (default 2). */
  readonly retries?: number
  /** Per attempt (default 60,000 ms). */
  readonly timeoutMs?: number
  /** A fetch to reach the gateway with (default: the global fetch). */
  readonly fetch?: typeof fetch
  /** The device attester key pair (default: the platform's: a file in the config directory on Node and Deno). */
  readonly deviceKey?: CryptoKeyPair
  /** Stable (keyed) aliases for embeddings, so equal inputs embed equally (default true; docs: tokeniser). */
  readonly stableEmbeddingAliases?: boolean
  /**
   * Limits for files attached to calls (OpenAI `file` parts, Anthropic `document` blocks), which are read and
   * tokenised on this device: `maxBytes` per file (default 20 MB), `maxExpandedBytes` and `maxEntries` for packages.
   */
  readonly fileLimits?: Partial<FileLimits>
  /** Override of the engine identity (tests, custom builds). */
  readonly engine?: EngineIdentity
  /**
   * Images, audio, files and documents the device cannot read as text (the egress policy): `refuse` (default: the
   * call fails with EgressRefusedError `unsupported_content`, nothing sent), `pass` (sent as they are and declared in
   * the attestation), `redact` (images only: identifiers painted over on the device; needs `redactImage`).
   */
  readonly mediaPolicy?: MediaPolicy
  /** JSON pointers (`*` for one segment) of fields the egress policy refuses or does not name, to send untokenised (declared). */
  readonly passthroughPaths?: ReadonlyArray<string>
  /** The image redactor `mediaPolicy: "redact"` uses (Node: `createImageRedactor()` from `@privacy-relay/sdk`). */
  readonly redactImage?: ImageRedactor
}

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal
  readonly timeoutMs?: number
  /** Sent as Idempotency-Key; one is generated for every relay call and every retried write when absent. */
  readonly idempotencyKey?: string
  /** W3C traceparent to continue your trace; a new trace is started when absent. */
  readonly traceparent?: string
}

/** What every answer of a relay call carries besides the provider's shape. */
export interface RelayMeta {
  /** The gateway's X-Request-Id. */
  readonly requestId: string | undefined
  /** The decoded v2 receipt (header or stream trailer); undefined when the key gets none (demo keys). */
  readonly receipt: Record<string, unknown> | undefined
  /** The receipt verified offline against the gateway's JWKS; undefined when there is no receipt. */
  readonly receiptVerified: boolean | undefined
  readonly receiptVerification: VerificationResult | undefined
  /** The gateway's countersignature of this device's attestation (X-Service-Receipt-V3), decoded. */
  readonly countersignature: Record<string, unknown> | undefined
  /** The tokenised request: exactly what left this device. */
  readonly tokenisedRequest: unknown
  /**
   * This call's aliases (alias -> original), already restored in the answer. They stay on this device; an
   * application that shows the tokenised text, or keeps a conversation's aliases to restore later, reads them here.
   */
  readonly aliases: ReadonlyMap<string, string>
}

export type WithMeta<T> = T & RelayMeta

/** A streamed answer: chunks (OpenAI) or events (Anthropic) with originals restored, then `receipt` once it ends. */
export interface RelayStream<T> extends AsyncIterable<T> {
  readonly requestId: string | undefined
  readonly tokenisedRequest: unknown
  /** This call's aliases (alias -> original); they stay on this device. */
  readonly aliases: ReadonlyMap<string, string>
  /** Set once the stream has ended. */
  receipt: Record<string, unknown> | undefined
  receiptVerified: boolean | undefined
  receiptVerification: VerificationResult | undefined
  /** Stops reading and cancels the call. */
  readonly abort: () => void
}

type Json = Record<string, any>

const decodeHeader = (value: string | null): Record<string, unknown> | undefined => {
  if (value === null) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0))))
  } catch {
    return undefined
  }
}

/** Which relay route a URL of an official SDK means (by its path's end), for `client.fetch`. */
const routeOfPath = (pathname: string): AttestationRoute | "models" | undefined => {
  if (pathname.endsWith("/chat/completions")) return "chat.completions"
  if (pathname.endsWith("/messages")) return "messages"
  if (pathname.endsWith("/embeddings")) return "embeddings"
  if (pathname.endsWith("/responses")) return "responses"
  if (pathname.endsWith("/models")) return "models"
  return undefined
}

/** What warmUp() gives the built-in name model to run once: invented names, no one's data. */
const NAME_MODEL_WARM_UP_TEXT = "Dr. Ada Example met Grace Sample in Paris on Monday."

/** Request headers of an official SDK that mean something to the gateway; the rest (its own auth included) stay here. */
const FORWARDED_HEADERS = ["idempotency-key", "traceparent", "tracestate", "anthropic-version", "anthropic-beta"]

export class RelayClientCore {
  readonly gatewayUrl: string
  readonly rest: RestApi
  /**
   * A `fetch` for the official `openai` and `@anthropic-ai/sdk` packages (their `fetch` option): their requests are
   * tokenised and attested here, sent to this client's gateway with this client's key, and their answers (streams
   * included) come back with the originals restored. Their own API key and base URL are not used.
   */
  readonly fetch: typeof fetch
  readonly chat: { readonly completions: { readonly create: { (body: Json & { stream: true }, options?: CallOptions): Promise<RelayStream<Json>>; (body: Json, options?: CallOptions): Promise<WithMeta<Json>> } } }
  readonly messages: { readonly create: { (body: Json & { stream: true }, options?: CallOptions): Promise<RelayStream<Json>>; (body: Json, options?: CallOptions): Promise<WithMeta<Json>> } }
  readonly embeddings: { readonly create: (body: Json, options?: CallOptions) => Promise<WithMeta<Json>> }
  /**
   * The OpenAI Responses API (POST /api/v1/responses). JSON: the response with the originals restored and its receipt.
   * `stream: true`: the Responses events (`response.output_text.delta`, ..., `response.completed`) with the text
   * restored as it streams; `.receipt` once the stream has ended (the gateway's receipt-v2 frame is not yielded).
   */
  readonly responses: { readonly create: { (body: Json & { stream: true }, options?: CallOptions): Promise<RelayStream<Json>>; (body: Json, options?: CallOptions): Promise<WithMeta<Json>> } }
  /**
   * Multi-turn Responses conversations whose history and aliases stay on this device (conversation.ts): each turn is
   * sent with the earlier ones, a value keeps its alias from turn to turn, and nothing is stored at the provider.
   */
  readonly conversations: { readonly create: () => Conversation }
  readonly models: { readonly list: (options?: CallOptions) => Promise<Json> }

  readonly #apiKey: () => string
  readonly #keyHeldByServer: boolean
  readonly #engine: Engine
  readonly #transport: Transport
  readonly #fetch: typeof fetch
  readonly #jwks: JwksCache
  #identity: Promise<void> | undefined

  constructor(options: RelayClientOptions, platform: Platform) {
    try {
      this.gatewayUrl = parseGatewayUrl(options.gatewayUrl)
    } catch (error) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: (error as Error).message.replaceAll("GATEWAY_URL", "gatewayUrl"), cause: error })
    }
    if (options.apiKey !== undefined && options.apiKeyFile !== undefined) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: "Give apiKey or apiKeyFile, not both." })
    }
    if (options.keyHeldByServer === true && (options.apiKey !== undefined || options.apiKeyFile !== undefined)) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: "keyHeldByServer means this client holds no key: drop apiKey and apiKeyFile." })
    }
    const fileKey = options.apiKeyFile === undefined ? undefined : platform.readApiKeyFile(options.apiKeyFile)
    const apiKey = options.apiKey ?? fileKey
    if (apiKey !== undefined && !/^svc_[a-z2-7]+$/.test(apiKey)) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: "apiKey is not a gateway key (svc_...)." })
    }
    this.#apiKey = () => {
      if (apiKey === undefined) throw new ConfigurationError({ status: 0, code: "configuration_error", message: "This call needs a gateway key: give apiKey or apiKeyFile." })
      return apiKey
    }
    this.#keyHeldByServer = options.keyHeldByServer === true
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.#transport = createTransport(this.#fetch, { ...DEFAULT_RETRY_POLICY, retries: options.retries ?? DEFAULT_RETRY_POLICY.retries }, options.timeoutMs ?? 60_000)
    const stable = options.stableEmbeddingAliases ?? true
    let deviceKey: Promise<CryptoKeyPair> | undefined = options.deviceKey === undefined ? undefined : Promise.resolve(options.deviceKey)
    let aliasSecret: Promise<Uint8Array | undefined> | undefined
    this.#engine = {
      identity: options.engine ?? platform.engine(),
      deviceKey: () => (deviceKey ??= platform.deviceKey()),
      names: nameModelOf(options.nameModel, options.fetch),
      stableAliasSecret: stable ? () => (aliasSecret ??= platform.stableAliasSecret()) : undefined,
      identifierSecret: () => (aliasSecret ??= platform.stableAliasSecret()),
      egress: {
        ...(options.mediaPolicy === undefined ? {} : { mediaPolicy: options.mediaPolicy }),
        ...(options.passthroughPaths === undefined ? {} : { passthroughPaths: options.passthroughPaths }),
        ...(options.redactImage === undefined ? {} : { redactImage: options.redactImage })
      },
      ...(options.fileLimits === undefined ? {} : { fileLimits: options.fileLimits })
    }
    // The gateway's receipt keys, fetched when first needed and again once on an unknown kid (a key rotation).
    this.#jwks = createJwksCache({ gatewayUrl: this.gatewayUrl, fetch: this.#fetch })
    this.rest = new RestApi({
      gatewayUrl: this.gatewayUrl,
      transport: this.#transport,
      apiKey: () => this.#apiKey(),
      portalToken: options.portalToken,
      verify: (envelope) => verifyReceipt(envelope as object, { jwks: this.#jwks }),
      ready: () => this.#ready()
    })

    const create = (route: StreamRoute) => ((body: Json, callOptions?: CallOptions) => this.#relay(route, body, callOptions ?? {})) as any
    this.chat = { completions: { create: create("chat.completions") } }
    this.messages = { create: create("messages") }
    this.responses = { create: create("responses") }
    this.conversations = { create: () => new Conversation((body, callOptions, aliasSecret) => this.#relay("responses", body, callOptions, aliasSecret)) }
    this.embeddings = { create: (body, callOptions) => this.#relay("embeddings", body, callOptions ?? {}) as Promise<WithMeta<Json>> }
    this.models = {
      list: async (callOptions) => {
        await this.#ready()
        const res = await this.#transport.send(`${this.gatewayUrl}/api/v1/models`, { headers: this.#headers({}, callOptions ?? {}) }, { retry: true, ...callOptions })
        return res.json()
      }
    }
    this.fetch = (input, init) => this.#officialSdkFetch(new Request(input, init))
  }

  /** The gateway identity probe, once per client (again after a failure): nothing is sent to a URL that fails it. */
  #ready(): Promise<void> {
    // The probe reads the gateway's receipt keys: they seed the JWKS cache, so verifying the first receipt fetches nothing.
    return (this.#identity ??= probeGatewayKeys(this.gatewayUrl, { fetch: this.#fetch }).then((jwks) => this.#jwks.seed(jwks), (error) => {
      this.#identity = undefined
      const message = error instanceof ProxyStartError ? error.message.replaceAll("GATEWAY_URL", "gatewayUrl") : String(error)
      throw new GatewayIdentityError({ status: 0, code: "gateway_identity_failed", message, cause: error })
    }))
  }

  /**
   * Gets the first call's one-time costs out of the way, e.g. while a page waits for its user to type: the gateway
   * identity probe (which also fetches the receipt keys) and, with the built-in name model, its first run (it builds
   * its lexicon then; a fixed sample text, nothing personal). Rejects like a call would when the gateway fails the
   * probe. A name model service is not called.
   */
  async warmUp(): Promise<void> {
    const names = this.#engine.names
    await Promise.all([this.#ready(), names === builtinNameModel ? names.detect(NAME_MODEL_WARM_UP_TEXT) : undefined])
  }

  /** The key relay calls carry: none when a server of the application adds it (keyHeldByServer). */
  #relayKey(): string | undefined {
    return this.#keyHeldByServer ? undefined : this.#apiKey()
  }

  #headers(extra: Record<string, string>, options: CallOptions): Record<string, string> {
    return {
      ...(this.#keyHeldByServer ? {} : { authorization: `Bearer ${this.#apiKey()}` }),
      accept: "application/json",
      traceparent: options.traceparent ?? newTraceparent(),
      ...extra
    }
  }

  async #send(route: AttestationRoute, prepared: PreparedCall, options: CallOptions, stream: boolean): Promise<Response> {
    await this.#ready()
    const init = relayRequestInit(prepared, {
      apiKey: this.#relayKey(),
      stream,
      headers: { traceparent: options.traceparent ?? newTraceparent(), "idempotency-key": options.idempotencyKey ?? crypto.randomUUID() }
    })
    return this.#transport.send(`${this.gatewayUrl}${RELAY_PATHS[route]}`, init, {
      retry: true,
      signal: options.signal,
      // A stream's time limit covers its first byte; the stream itself may run longer.
      timeoutMs: options.timeoutMs
    })
  }

  async #verify(receipt: Record<string, unknown> | undefined) {
    if (receipt === undefined) return { receiptVerified: undefined, receiptVerification: undefined }
    const verification = await verifyReceipt(receipt, { jwks: this.#jwks })
    return { receiptVerified: verification.valid, receiptVerification: verification }
  }

  async #relay(route: AttestationRoute, body: Json, options: CallOptions, aliasSecret?: Uint8Array): Promise<WithMeta<Json> | RelayStream<Json>> {
    // With the caller's own Idempotency-Key, a retry of this call must tokenise to the same bytes (callAliasSecret);
    // a conversation's turns share its secret (conversation.ts), which does that too.
    const prepared = await prepareCall(this.#engine, route, body, { aliasSecret: aliasSecret ?? await callAliasSecret(this.#engine, options.idempotencyKey) })
    const stream = isStreamed(route, body)
    const response = await this.#send(route, prepared, options, stream)
    const requestId = response.headers.get("x-request-id") ?? undefined
    if (stream) return this.#stream(route as StreamRoute, prepared, response, requestId)
    const answer = JSON.parse(detokeniseResponseText(await response.text(), prepared.map)) as Json
    const receipt = decodeHeader(response.headers.get("x-service-receipt-v2"))
    const meta = {
      requestId,
      receipt,
      ...(await this.#verify(receipt)),
      countersignature: decodeHeader(response.headers.get("x-service-receipt-v3")),
      tokenisedRequest: prepared.tokenisedBody,
      aliases: prepared.map
    }
    // Not enumerable: the answer still serialises to exactly the provider's shape.
    for (const [key, value] of Object.entries(meta)) Object.defineProperty(answer, key, { value, enumerable: false })
    return answer as WithMeta<Json>
  }

  #stream(route: StreamRoute, prepared: PreparedCall, response: Response, requestId: string | undefined): RelayStream<Json> {
    const sse = createSseDetokeniser(route, prepared.map)
    const reader = response.body!.getReader()
    const verify = (receipt: unknown) => this.#verify(receipt as Record<string, unknown> | undefined)
    const result: RelayStream<Json> = {
      requestId,
      tokenisedRequest: prepared.tokenisedBody,
      aliases: prepared.map,
      receipt: undefined,
      receiptVerified: undefined,
      receiptVerification: undefined,
      abort: () => void reader.cancel().catch(() => {}),
      async *[Symbol.asyncIterator]() {
        const decoder = new TextDecoder()
        const emit = function*(events: ReadonlyArray<SseEvent>) {
          for (const e of events) if (e.event !== "receipt-v2" && e.data !== "[DONE]" && e.json !== undefined) yield e.json as Json
        }
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            yield* emit(sse.push(decoder.decode(value, { stream: true })))
          }
          yield* emit(sse.push(decoder.decode()))
          yield* emit(sse.end())
        } catch (error) {
          if (error instanceof RelayError) throw error
          throw new StreamError({ status: response.status, code: "stream_error", message: `The stream broke: ${(error as Error).message}`, requestId, cause: error })
        } finally {
          reader.releaseLock()
        }
        if (!sse.completed()) {
          throw new StreamError({ status: response.status, code: "stream_error", message: "The stream ended before its end marker (the upstream cut it); the answer is incomplete.", requestId })
        }
        const receipt = sse.receipt() as Record<string, unknown> | undefined
        const checked = await verify(receipt)
        result.receipt = receipt
        result.receiptVerified = checked.receiptVerified
        result.receiptVerification = checked.receiptVerification
      }
    }
    return result
  }

  /** `client.fetch`: an official SDK's request, made private. */
  async #officialSdkFetch(request: Request): Promise<Response> {
    const route = routeOfPath(new URL(request.url).pathname)
    const forwarded: Record<string, string> = {}
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers.get(name)
      if (value !== null) forwarded[name] = value
    }
    try {
      if (route === "models") {
        await this.#ready()
        const res = await this.#fetch(`${this.gatewayUrl}/api/v1/models`, { headers: this.#headers(forwarded, {}), signal: request.signal, redirect: "error" })
        return new Response(res.body, { status: res.status, headers: res.headers })
      }
      if (route === undefined || request.method !== "POST") {
        return errorResponse(route === "messages", 404, "not_found", `client.fetch relays chat completions, messages, responses, embeddings and the model list; not ${request.method} ${new URL(request.url).pathname}.`)
      }
      let body: Json
      try {
        body = await request.json()
      } catch {
        return errorResponse(route === "messages", 400, "invalid_request", "The request body is not JSON.")
      }
      const prepared = await prepareCall(this.#engine, route, body, {
        signal: request.signal,
        aliasSecret: await callAliasSecret(this.#engine, request.headers.get("idempotency-key") ?? undefined)
      })
      await this.#ready()
      const stream = isStreamed(route, body)
      const response = await this.#fetch(
        `${this.gatewayUrl}${RELAY_PATHS[route]}`,
        relayRequestInit(prepared, { apiKey: this.#relayKey(), stream, headers: { traceparent: newTraceparent(), ...forwarded }, signal: request.signal })
      )
      if (!response.ok) {
        // Errors carry no user content; an Anthropic client reads Anthropic's error shape.
        const headers = new Headers(response.headers)
        headers.delete("content-length")
        headers.delete("content-encoding")
        const error = errorFromAnswer(response.status, response.headers, await response.text())
        return errorResponse(route === "messages", response.status, error.code, error.message, headers, error.body)
      }
      return await restoredAnswer(route, prepared.map, response, stream)
    } catch (error) {
      if (error instanceof RelayError) {
        // A local refusal keeps its details (the egress policy's path, kind and setting) for the caller.
        const fields = error.status === 0 && error instanceof EgressRefusedError ? error.body : undefined
        return errorResponse(route === "messages", error.status === 0 ? statusOfLocalError(error) : error.status, error.code, error.message, undefined, fields)
      }
      throw error
    }
  }
}

/** Local failures answered to an official SDK: not retried by it unless they are (connection, timeout). */
const statusOfLocalError = (error: RelayError): number => {
  if (error instanceof FileError) return error.httpStatus
  switch (error.code) {
    case "name_model_unavailable":
      return 503
    case "connection_error":
    case "gateway_identity_failed":
      return 502
    case "timeout":
      return 504
    case "unsupported_content":
      return 415
    default:
      return 400
  }
}

/**
 * An error for the official SDK, as the local proxy answers it (docs/proxy.md): the stable code is always
 * `error.code`. OpenAI clients get the gateway's envelope `{"error":{"code","message",...}}` with the gateway's other
 * fields (`balance_micros`, `details`, ...); Anthropic clients get Anthropic's shape, whose `error.type` is
 * Anthropic's type for the status (`billing_error`, `not_found_error`, ...) beside the same `code` and fields.
 */
const errorResponse = (
  anthropic: boolean,
  status: number,
  code: string,
  message: string,
  headers = new Headers(),
  fields: Readonly<Record<string, unknown>> = {}
) => {
  headers.set("content-type", "application/json")
  const { code: _code, message: _message, ...extra } = fields
  const body = anthropic ? anthropicErrorBody(status, code, message, extra) : { error: { ...extra, code, message } }
  return new Response(JSON.stringify(body), { status, headers })
}
