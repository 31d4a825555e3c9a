import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { GatewayPrincipal } from "../../services/Keys.ts"
import { ProviderRouter, type RouteTarget } from "../../services/ProviderRouter.ts"
import { RelayLimits } from "../../services/RelayLimits.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import { verifyAttestation } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { formatTraceparent } from "../../src/http/traceparent.ts"
import { isShapeProblem, readRelayShape } from "../../src/relay/requestShape.ts"
import { nodeAttestationCrypto } from "../crypto/nodeAttestationCrypto.ts"
import { requestBodyJson } from "../crypto/nodeSha256.ts"
import { readBodyBytes } from "../http/body.ts"
import type { RelaySettings } from "./relayCall.ts"
import { readAll, upstreamError } from "./upstreamBody.ts"
import { postUpstream } from "./UpstreamClient.ts"

/** How a count was made: by the provider (Anthropic's count_tokens), or estimated here. */
export const TOKEN_COUNT_HEADER = "x-service-token-count"

/**
 * The documented estimate where the model's provider has no token counting endpoint: a quarter of the tokenised body's
 * bytes, rounded up (the estimate the relay meters with when a provider reports no usage). JSON punctuation makes it
 * err high, which is the safe side for a client deciding whether a conversation still fits.
 */
export const estimatedInputTokens = (bodyBytes: number): number => Math.ceil(bodyBytes / 4)

/** Request headers a provider may need on a token count (Claude Code sends beta flags). */
const PASS_THROUGH = ["anthropic-beta"] as const

/**
 * `POST /api/v1/messages/count_tokens`: Anthropic's token counting of a tokenised Messages body (docs/relay.md, "Token counting").
 * Fail-closed and attested like the relay routes (attested route `messages.count_tokens`), but not billed, not
 * metered and without receipts of any kind: it produces no output and costs nothing upstream. It takes a slot of the
 * rate windows of its own capability (`messages.count_tokens`) and needs a wallet with a balance, like every call
 * that reaches a provider with the gateway's keys. Counted by Anthropic when the model's provider speaks the
 * Messages API (the body relayed unchanged to its `/v1/messages/count_tokens`), else estimated
 * (`estimatedInputTokens`); `X-Service-Token-Count` says which (`provider` or `estimated`).
 */
export const countTokens = (principal: GatewayPrincipal, settings: Pick<RelaySettings, "allowlist">) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const ctx = yield* RequestContext
    const bodyBytes = yield* readBodyBytes
    const verdict = yield* Effect.promise(() =>
      verifyAttestation({
        header: request.headers["x-service-attestation"],
        engineHeader: request.headers["x-service-engine"],
        route: "messages.count_tokens",
        bodyBytes,
        nowSeconds: Math.floor(Date.now() / 1000),
        allowlist: settings.allowlist,
        crypto: nodeAttestationCrypto
      })
    )
    ctx.stages.end("attestation")
    if (!verdict.ok) return yield* new ApiError({ status: verdict.status, code: verdict.code, message: verdict.message })
    const shape = readRelayShape("messages.count_tokens", requestBodyJson(bodyBytes))
    if (isShapeProblem(shape)) {
      return yield* new ApiError({ status: 400, code: "invalid_request", message: shape.message, extra: { details: { path: shape.path } } })
    }
    if (shape.stream) {
      return yield* new ApiError({ status: 400, code: "invalid_request", message: "Token counting cannot be streamed.", extra: { details: { path: "stream" } } })
    }
    const target = yield* (yield* ProviderRouter).resolve({ modelId: shape.model, capability: "messages", principal })
    ctx.stages.end("routing")
    const limits = yield* RelayLimits
    const admission = yield* limits.admit(principal, "messages.count_tokens", { holdMicros: 0n })
    // Without an idempotency slot nothing else can be answered; kept for the type.
    if (admission._tag !== "Admitted") return yield* new ApiError({ status: 500, code: "internal_error", message: "admission without a slot" })
    const headers = { ...admission.headers }
    const answer = target.endpoint.wire === "anthropic" && target.sign === undefined
      ? countAtProvider(target, bodyBytes, headers, request.headers, ctx)
      : Effect.succeed(HttpServerResponse.jsonUnsafe(
        { input_tokens: estimatedInputTokens(bodyBytes.byteLength) },
        { headers: { ...headers, [TOKEN_COUNT_HEADER]: "estimated" } }
      ))
    return yield* answer.pipe(Effect.ensuring(limits.finish({ hold: admission.hold, capability: "messages.count_tokens", billedMicros: 0n, tokens: 0 })))
  })

/** Anthropic's `POST /v1/messages/count_tokens` beside the target's Messages endpoint, with the client's bytes unchanged. */
const countAtProvider = (
  target: RouteTarget,
  bodyBytes: Uint8Array,
  responseHeaders: Record<string, string>,
  clientHeaders: Readonly<Record<string, string | undefined>>,
  ctx: (typeof RequestContext)["Service"]
) =>
  Effect.gen(function*() {
    const headers: Record<string, string> = {
      ...target.authHeaders,
      "content-type": "application/json",
      accept: "application/json",
      "x-request-id": ctx.requestId,
      traceparent: formatTraceparent(ctx.traceId, ctx.spanId, ctx.sampled)
    }
    for (const name of PASS_THROUGH) {
      const v = clientHeaders[name]
      if (v !== undefined) headers[name] = v
    }
    const upstream = yield* postUpstream({
      provider: target.provider.slug,
      url: `${target.url}/count_tokens`,
      headers,
      body: bodyBytes,
      timeoutMs: target.timeoutMs
    })
    if (upstream.status >= 400) {
      return yield* Effect.flatMap(
        Effect.promise(() => upstreamError(target, upstream)).pipe(Effect.ensuring(Effect.sync(upstream.done))),
        Effect.fail
      )
    }
    const body = yield* Effect.tryPromise({
      try: () => readAll(upstream.body),
      catch: () => malformed(target, upstream.status)
    }).pipe(Effect.ensuring(Effect.sync(upstream.done)))
    let parsed: unknown
    try {
      parsed = JSON.parse(body.toString("utf8"))
    } catch {
      parsed = undefined
    }
    const count = (parsed as { input_tokens?: unknown } | undefined)?.input_tokens
    if (typeof count !== "number" || !Number.isInteger(count) || count < 0) return yield* malformed(target, upstream.status)
    ctx.stages.end("upstream")
    return HttpServerResponse.uint8Array(body, {
      status: 200,
      contentType: "application/json",
      headers: { ...responseHeaders, [TOKEN_COUNT_HEADER]: "provider" }
    })
  })

const malformed = (target: RouteTarget, status: number) =>
  new ApiError({
    status: 502,
    code: "upstream_error",
    message: `The upstream provider "${target.provider.slug}" sent a token count that is not valid in its format.`,
    extra: { provider: target.provider.slug, provider_status: status }
  })
