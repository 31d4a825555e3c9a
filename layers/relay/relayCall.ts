import { Deferred, Duration, Effect, Fiber, Result, Stream } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { AppConfig } from "../../services/AppConfig.ts"
import { IDEMPOTENCY_WAIT_MS, Idempotency, idempotencySlotKey, invalidIdempotencyKey, type StoredResponse } from "../../services/Idempotency.ts"
import type { GatewayPrincipal } from "../../services/Keys.ts"
import { ProviderRouter, type RouteTarget } from "../../services/ProviderRouter.ts"
import { RelayLimits } from "../../services/RelayLimits.ts"
import { Slots } from "../../services/Slots.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import { type CompletedCall, Settlement } from "../../services/Settlement.ts"
import type { EngineAllowlist } from "../../sdks/typescript/src/wire/attestation/engine-allowlist.ts"
import { type V3Envelope, verifyAttestation } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { egressPolicyViolation } from "../../sdks/typescript/src/wire/egressPolicy.ts"
import { issuesReceipts } from "../../src/keys/demo.ts"
import { countersignAttestation } from "../../sdks/typescript/src/wire/receipts/countersign.ts"
import type { Signer } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import { nodeAttestationCrypto } from "../crypto/nodeAttestationCrypto.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { envelopeHashSync } from "../crypto/envelopeHashSync.ts"
import { DEFAULT_HOLD_OUTPUT_TOKENS, maxCostHoldMicros } from "../../src/billing/pricing.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { formatTraceparent } from "../../src/http/traceparent.ts"
import { ROUTING_DECISION_HEADER, ROUTING_HEADER } from "../../src/routing/strategy.ts"
import { capabilityOf, isShapeProblem, readRelayShape, type RelayRoute } from "../../src/relay/requestShape.ts"
import { createSseUsageReader, type UpstreamUsage, usageFromJson } from "../../src/relay/usage.ts"
import { readBodyBytes } from "../http/body.ts"
import { requestBodyJson } from "../crypto/nodeSha256.ts"
import type { StreamTranslator } from "../../src/relay/translate/streamTranslator.ts"
import type { Translation } from "../../src/relay/translate/translation.ts"
import {
  MalformedUpstream,
  UnsupportedTool,
  unsupportedToolError,
  UntranslatableField,
  untranslatableError
} from "../../src/relay/translate/translationError.ts"
import { bodyHashOf, replay } from "../http/idempotent.ts"
import { postUpstream, type UpstreamResponse } from "./UpstreamClient.ts"
import { allAttemptsFailed, expandPooledKeys, fallbackDecision, isRetryableStatus, orderByHealth, type UpstreamAttempt } from "./fallback.ts"
import type { KeyRotation } from "./keyRotation.ts"
import { keySlotLabel } from "../../src/providers/keyFile.ts"
import { type PreparedRequest, prepareRequest } from "./preparedRequest.ts"
import { awsErrorType, signedHeaders } from "./signedRequest.ts"
import type { ProviderHealth } from "./providerHealth.ts"
import { RoutingPolicies } from "../../services/RoutingPolicies.ts"


/** A translated answer the gateway could not read as its provider's format. */
const malformedAnswer = (provider: string, status: number) =>
  new ApiError({
    status: 502,
    code: "upstream_error",
    message: `The upstream provider "${provider}" sent an answer that is not valid in its format.`,
    extra: { provider, provider_status: status }
  })
/** Rough token count used only when a provider reports no usage (the record is then marked `estimated`). */
const estimateTokens = (bytes: number) => Math.ceil(bytes / 4)
/** Largest upstream body (error or non-streamed answer) the gateway reads into memory. */
const MAX_UPSTREAM_BODY = 32 * 1024 * 1024

/** Headers from the client that an upstream provider legitimately needs; nothing else is passed on. */
const PASS_THROUGH = ["anthropic-beta"] as const

/**
 * The in-flight slot expires this long after its owner last renewed it (every SLOT_RENEW_MS while the call runs, up to
 * SLOT_MAX_HOLD_MS), as layers/pg/Idempotency.ts does: a node that died frees its keys' retries within 15 s.
 */
const SLOT_TTL_MS = 15_000
const SLOT_RENEW_MS = 5_000
const SLOT_MAX_HOLD_MS = 10 * 60_000
/** A duplicate on another node looks for the original's response this often while it waits. */
const POLL_MS = 50
/** Same-node duplicates wait on the original's Deferred instead of polling. */
const localOriginals = new Map<string, Deferred.Deferred<void>>()

const stillInFlight = () =>
  new ApiError({
    status: 409,
    code: "idempotency_in_flight",
    message: "The original request with this Idempotency-Key is still running; retry shortly to get its response.",
    headers: { "retry-after": "1" }
  })

/** A span only for a sampled request: building one (stack capture, attributes) costs every call that is not exported. */
const spanIf = (sampled: boolean, name: string, attributes?: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    sampled ? Effect.withSpan(effect, name, attributes === undefined ? undefined : { attributes }) : effect

/** The idempotency key of a call: its identity for the stored response, and the slot its admission took. */
interface IdempotentRelay {
  readonly scope: string
  readonly key: string
  readonly bodyHash: string
}

/**
 * How a call ends, once: the hold back, the mirror debited by what was billed, the tokens counted, the slot
 * released (`stored`: the settlement stored the response). Safe to run again (a no-op).
 */
type Finish = (billedMicros: bigint, tokens: number, stored: boolean) => Effect.Effect<void>

export const readAll = async (body: AsyncIterable<Uint8Array>) => {
  const parts: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > MAX_UPSTREAM_BODY) throw new Error("upstream body too large")
    parts.push(chunk)
  }
  return Buffer.concat(parts)
}

/** A provider error, reported without its body (which may quote credentials); status and type only. */
export const upstreamError = async (target: RouteTarget, res: UpstreamResponse) => {
  let providerType: string | undefined
  try {
    const json = JSON.parse((await readAll(res.body)).toString("utf8"))
    // OpenAI/Anthropic: error.type (or code); Gemini: error.status (its code is the HTTP status number); AWS: a header.
    const t = json?.error?.type ?? json?.error?.status ?? json?.error?.code ?? json?.type ?? awsErrorType(res.headers["x-amzn-errortype"])
    if (typeof t === "string" && t.length <= 64) providerType = t
  } catch {
    // an unreadable error body is still an upstream error
  }
  const retryAfter = res.headers["retry-after"]
  return new ApiError({
    status: 502,
    code: "upstream_error",
    message: `The upstream provider "${target.provider.slug}" answered ${res.status}.`,
    extra: { provider: target.provider.slug, provider_status: res.status, provider_error_type: providerType ?? null },
    headers: typeof retryAfter === "string" ? { "retry-after": retryAfter } : undefined
  })
}

/**
 * The target that answered, with the routing decision its receipts seal: a fallback model is recorded as one; a
 * provider with several pooled keys records the key slot (`key 2 of 3`) whenever there is a decision, and a retry
 * on another key of the requested provider is a fallback decision from the provider to itself.
 */
const usedTarget = (requested: RouteTarget, answered: RouteTarget, retried: boolean): RouteTarget => {
  const sameModel = answered.provider.slug === requested.provider.slug && answered.model.id === requested.model.id
  const decision = !sameModel || (retried && answered.keySlot !== undefined)
    ? fallbackDecision(requested, answered)
    : requested.routingDecision
  if (answered.keySlot === undefined || decision === undefined) return { ...answered, routingDecision: decision }
  return { ...answered, routingDecision: { ...decision, key_slot: keySlotLabel(answered.keySlot) } }
}

export interface RelaySettings {
  readonly allowlist: EngineAllowlist
  /** Providers that failed recently, skipped (for a cool-down) when a call has somewhere else to go. */
  readonly health: ProviderHealth
  /** The rotation over a provider's pooled keys, each skipped for a cool-down after failing. */
  readonly keys: KeyRotation
}

/**
 * One relay call after authentication, in the order of DESIGN.md section 4: engine and attestation (403/428),
 * body shape (400), model (404/403), limits (429), balance hold (402), then the upstream call and settlement.
 * Nothing is forwarded unless every check passed.
 */
export const relayCall = (
  route: RelayRoute,
  principal: GatewayPrincipal,
  settings: RelaySettings,
  idempotencyKey: string | undefined
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const ctx = yield* RequestContext
    const config = yield* AppConfig
    const idempotency = yield* Idempotency
    const startedAt = new Date()
    const bodyBytes = yield* readBodyBytes

    // With an Idempotency-Key the stored response is looked for WHILE the attestation is checked: a replay needs no
    // fresh attestation, and the look-up's round trip overlaps the signature check. The key's slot is taken by the
    // admission below; a response stored between this look-up and that admission is caught by the slot's done mark.
    let idem: IdempotentRelay | undefined
    let lookup: Fiber.Fiber<StoredResponse | undefined, ApiError> | undefined
    if (idempotencyKey !== undefined) {
      const invalid = invalidIdempotencyKey(idempotencyKey)
      if (invalid !== undefined) return yield* invalid
      idem = { scope: `${principal.orgId}|${route}`, key: idempotencyKey, bodyHash: bodyHashOf(bodyBytes) }
      lookup = yield* Effect.forkChild(idempotency.find(idem), { startImmediately: true })
      // Lets the look-up's query go out before the (synchronous) signature check takes the thread.
      yield* Effect.yieldNow
    }

    const verdict = yield* Effect.promise(() =>
      verifyAttestation({
        header: request.headers["x-service-attestation"],
        engineHeader: request.headers["x-service-engine"],
        route,
        bodyBytes,
        nowSeconds: Math.floor(Date.now() / 1000),
        allowlist: settings.allowlist,
        // Synchronous node:crypto with a bounded cache of attester keys instead of a WebCrypto import per call.
        crypto: nodeAttestationCrypto
      })
    ).pipe(spanIf(ctx.sampled, "relay.attestation"))
    ctx.stages.end("attestation")
    if (lookup !== undefined) {
      const found = yield* Fiber.join(lookup)
      ctx.stages.end("idempotency")
      if (found !== undefined) return replay(found)
    }
    if (!verdict.ok) return yield* new ApiError({ status: verdict.status, code: verdict.code, message: verdict.message })
    // The attested egress_sha256 was just checked to equal the JCS SHA-256 of this exact body.
    const clientBodyHash = verdict.attestation.claims["v3-attestation"].egress_sha256

    // Parsed once for the whole call (the attestation's body hash already did: the same value).
    const clientBody = requestBodyJson(bodyBytes) as Record<string, unknown>
    const shape = readRelayShape(route, clientBody)
    if (isShapeProblem(shape)) {
      return yield* new ApiError({ status: 400, code: "invalid_request", message: shape.message, extra: { details: { path: shape.path } } })
    }
    // Defence in depth behind the clients' egress policy (stale engines, raw REST callers): field names, JSON types
    // and part types only, never text. What the attestation declares as passed untokenised may stray.
    const violation = egressPolicyViolation(route, clientBody, verdict.attestation.claims["v3-attestation"].passthrough ?? [])
    if (violation !== undefined) {
      return yield* new ApiError({ status: 400, code: "egress_policy_violation", message: violation.message, extra: { details: { path: violation.path } } })
    }
    const capability = capabilityOf[route]
    // Routing (off unless X-Service-Routing asks) sees metadata only: sizes and caps, never the body's content.
    const target = yield* (yield* ProviderRouter).resolve({
      modelId: shape.model,
      capability,
      principal,
      routing: { header: request.headers[ROUTING_HEADER], bodyBytes: bodyBytes.byteLength, maxOutputTokens: shape.maxOutputTokens }
    })
    // A model whose provider speaks the other conversation format: the body sent upstream is the translated one,
    // and the receipt's hash_upstream_request hashes exactly those (JCS) bytes.
    const client = { body: clientBody, bytes: bodyBytes, hash: clientBodyHash }
    let primary: PreparedRequest
    try {
      primary = prepareRequest(route, target, client, { fallback: false })
    } catch (e) {
      if (e instanceof UntranslatableField) return yield* untranslatableError(e, target.provider.slug, target.endpoint.wire)
      if (e instanceof UnsupportedTool) return yield* unsupportedToolError(e, target.provider.slug)
      throw e
    }
    // The organisation's fallbacks (never for embeddings: another model's vectors are not comparable). A fallback
    // this key cannot call, or whose format cannot carry this request, is left out.
    const fallbacks: Array<PreparedRequest> = []
    if (route !== "embeddings") {
      const router = yield* ProviderRouter
      for (const modelId of yield* (yield* RoutingPolicies).fallbacksOf(principal.orgId)) {
        const resolved = yield* Effect.result(router.resolve({ modelId, capability, principal }))
        if (Result.isFailure(resolved)) continue
        const t = resolved.success
        if (t.provider.slug === target.provider.slug && t.model.id === target.model.id) continue
        if (fallbacks.some((f) => f.target.provider.slug === t.provider.slug && f.target.model.id === t.model.id)) continue
        try {
          fallbacks.push(prepareRequest(route, t, client, { fallback: true }))
        } catch (e) {
          if (!(e instanceof UntranslatableField) && !(e instanceof UnsupportedTool)) throw e
        }
      }
    }
    const candidates = orderByHealth([primary, ...fallbacks], settings.health)
      .flatMap((c) => expandPooledKeys(c, settings.keys, shape.stream))
    ctx.stages.end("routing")

    const settlement = yield* Settlement
    // Enough for the most expensive candidate the call may end up at.
    let holdMicros = 0n
    for (const c of candidates) {
      const m = maxCostHoldMicros({
        bodyBytes: bodyBytes.byteLength,
        maxOutputTokens: route === "embeddings" ? 0 : shape.maxOutputTokens,
        inputUsdPerMTok: c.target.model.inputUsdPerMTok,
        outputUsdPerMTok: c.target.model.outputUsdPerMTok,
        keyMode: c.target.keyMode
      })
      if (m > holdMicros) holdMicros = m
    }
    // Admission in ONE operation on the shared state: the key's slot, quota, rate windows and the wallet hold.
    const limits = yield* RelayLimits
    const slot = idem === undefined ? undefined : { key: idempotencySlotKey(idem.scope, idem.key), owner: crypto.randomUUID(), ttlMs: SLOT_TTL_MS }
    const deadline = Date.now() + IDEMPOTENCY_WAIT_MS
    const admit = limits.admit(principal, capability, { holdMicros, slot }).pipe(
      Effect.onError(() => Effect.sync(() => ctx.stages.end("admission")))
    )
    let admission = yield* admit
    while (admission._tag === "SlotTaken") {
      // The original with this key is in flight (here or on another node), or has just stored its response.
      const found = yield* idempotency.find(idem!)
      if (found !== undefined) return replay(found)
      const remaining = deadline - Date.now()
      if (remaining <= 0) return yield* stillInFlight()
      const original = localOriginals.get(slot!.key)
      if (original !== undefined) yield* Deferred.await(original).pipe(Effect.timeoutOption(Duration.millis(remaining)))
      else yield* Effect.sleep(Duration.millis(Math.min(POLL_MS, remaining)))
      admission = yield* admit
    }
    const { hold, headers: limitHeaders } = admission
    ctx.stages.end("admission")
    const slots = yield* Slots
    // Keeps the slot while this node runs the call; a failed renewal is tried again at the next tick.
    const heartbeat = slot === undefined ? undefined : yield* Effect.forkDetach(Effect.gen(function*() {
      for (let renewed = 0; renewed * SLOT_RENEW_MS < SLOT_MAX_HOLD_MS; renewed++) {
        yield* Effect.sleep(Duration.millis(SLOT_RENEW_MS))
        yield* slots.renew(slot.key, slot.owner, SLOT_TTL_MS).pipe(Effect.catchCause(() => Effect.void))
      }
    }))
    const wakeDuplicates = slot === undefined ? undefined : Deferred.makeUnsafe<void>()
    if (slot !== undefined) localOriginals.set(slot.key, wakeDuplicates!)
    let finished = false
    const finish: Finish = (billedMicros, tokens, stored) =>
      Effect.suspend(() => {
        if (finished) return Effect.void
        finished = true
        if (slot !== undefined && localOriginals.get(slot.key) === wakeDuplicates) localOriginals.delete(slot.key)
        return (heartbeat === undefined ? Effect.void : Fiber.interrupt(heartbeat)).pipe(Effect.andThen(limits.finish({
          hold,
          capability,
          billedMicros,
          tokens,
          slot: slot === undefined ? undefined : { key: slot.key, owner: slot.owner, stored }
        }))).pipe(Effect.andThen(wakeDuplicates === undefined ? Effect.void : Deferred.succeed(wakeDuplicates, undefined)), Effect.asVoid)
      })
    /** Nothing billed: the hold goes back whole, the slot is free for a retry. */
    const giveBack = finish(0n, 0, false)

    const headersFor = (t: RouteTarget): Record<string, string> => {
      const headers: Record<string, string> = {
        ...t.authHeaders,
        "content-type": "application/json",
        accept: shape.stream ? t.endpoint.streamAccept ?? "text/event-stream" : "application/json",
        "x-request-id": ctx.requestId,
        traceparent: formatTraceparent(ctx.traceId, ctx.spanId, ctx.sampled)
      }
      for (const name of PASS_THROUGH) {
        const v = request.headers[name]
        if (v !== undefined) headers[name] = v
      }
      return headers
    }

    // Each candidate in order until one answers: a 429, a 5xx, a timeout or an unreachable provider before any byte
    // moves on to the next; any other answer (a 2xx, or a 4xx the request itself caused) ends the search. Nothing
    // has reached the client yet, so moving on is safe.
    const attempts: Array<UpstreamAttempt> = []
    let chosen: { readonly prepared: PreparedRequest; readonly upstream: UpstreamResponse } | undefined
    let lastError: ApiError | undefined
    yield* Effect.gen(function*() {
      for (const [i, prepared] of candidates.entries()) {
        const t = prepared.target
        const keySlot = t.keySlot === undefined ? {} : { key_slot: keySlotLabel(t.keySlot) }
        // A failed key cools down on its own; the provider only when none of its keys tried in this call answered
        // (the next candidate is another provider or model), so provider health keeps its meaning.
        const failed = () => {
          if (t.keySlot !== undefined) settings.keys.markFailed(t.provider.slug, t.keySlot.index)
          if (candidates[i + 1]?.target.provider.slug !== t.provider.slug) settings.health.markFailed(t.provider.slug)
        }
        const sent = yield* Effect.result(postUpstream({
          provider: t.provider.slug,
          url: prepared.url,
          headers: t.sign === undefined ? headersFor(t) : yield* signedHeaders(t.sign, prepared, headersFor(t)),
          body: prepared.body,
          timeoutMs: t.timeoutMs
        }).pipe(spanIf(ctx.sampled, "relay.upstream.headers", { provider: t.provider.slug, model: t.model.id })))
        if (Result.isFailure(sent)) {
          lastError = sent.failure
          attempts.push({ provider: t.provider.slug, model: t.model.id, provider_status: null, error: sent.failure.code, ...keySlot })
          failed()
          continue
        }
        const upstream = sent.success
        if (upstream.status >= 400) {
          const error = yield* Effect.promise(() => upstreamError(t, upstream)).pipe(Effect.ensuring(Effect.sync(upstream.done)))
          lastError = error
          attempts.push({ provider: t.provider.slug, model: t.model.id, provider_status: upstream.status, error: error.code, ...keySlot })
          if (!isRetryableStatus(upstream.status)) return
          failed()
          continue
        }
        if (t.keySlot !== undefined) settings.keys.markHealthy(t.provider.slug, t.keySlot.index)
        settings.health.markHealthy(t.provider.slug)
        chosen = { prepared, upstream }
        return
      }
    }).pipe(Effect.onError(() => giveBack))
    ctx.stages.end("upstream")
    if (chosen === undefined) {
      yield* giveBack
      // One candidate, or a refusal the request itself caused: the provider's own error, as without fallbacks.
      const last = attempts[attempts.length - 1]
      if (attempts.length === 1 || (last?.provider_status !== null && last !== undefined && !isRetryableStatus(last.provider_status))) {
        return yield* lastError!
      }
      return yield* allAttemptsFailed(attempts)
    }
    const { prepared, upstream } = chosen
    const translation = prepared.translation
    const used = usedTarget(target, prepared.target, attempts.length > 0)

    const base = {
      principal,
      target: used,
      capability: route,
      hold,
      requestId: ctx.requestId,
      traceId: ctx.traceId,
      startedAt,
      hashUpstreamRequest: prepared.hash,
      ...(translation === undefined ? {} : {
        translation: { from: translation.from, to: translation.to, hash_client_request: clientBodyHash }
      }),
      engineVersion: `${verdict.engine.id}/${verdict.engine.version}`,
      outputTokenCap: shape.maxOutputTokens ?? DEFAULT_HOLD_OUTPUT_TOKENS
    }
    const target_ = used

    const responseHeaders: Record<string, string> = { ...limitHeaders }
    if (target_.routingDecision !== undefined) responseHeaders[ROUTING_DECISION_HEADER] = JSON.stringify(target_.routingDecision)
    return shape.stream
      ? streamedResponse(base, upstream, settlement, responseHeaders, bodyBytes.byteLength, idem, finish, translation?.stream(clientBody, upstream.headers))
      : yield* bufferedResponse(
        base,
        upstream,
        settlement,
        responseHeaders,
        bodyBytes.byteLength,
        // A demo key gets no receipt of any kind, the countersignature included. A fallback that replaced the body's
        // model relayed a body the client did not attest, so the gateway cannot countersign the attestation for it.
        issuesReceipts(principal) && !prepared.modelRewritten ? { attestation: verdict.attestation, iss: config.publicBaseUrl } : undefined,
        idem,
        finish,
        translation,
        ctx.sampled
      ).pipe(Effect.onError(() => giveBack))
  })

type CallBase = Omit<CompletedCall, "providerResponseId" | "inputTokens" | "outputTokens" | "estimated" | "partial" | "hashUpstreamResponse"> & {
  /** The output tokens the hold was sized for (max_tokens, or the default cap): an estimate never exceeds it. */
  readonly outputTokenCap: number
}

/**
 * The metered call from what the provider reported. Missing counts are estimated from the bytes (the record is
 * then marked `estimated`); embeddings have no output, so a missing output count there is exactly zero.
 */
const meteredCall = (
  base: CallBase,
  usage: UpstreamUsage,
  bytes: { readonly request: number; readonly response: number },
  partial: boolean,
  hashUpstreamResponse: string
): CompletedCall => {
  const { outputTokenCap, ...call } = base
  const noOutput = base.capability === "embeddings"
  return {
    ...call,
    providerResponseId: usage.responseId ?? `gateway-${base.requestId}`,
    inputTokens: usage.inputTokens ?? estimateTokens(bytes.request),
    // Estimated from the bytes relayed (a stream's frames included, so far above the text's tokens): capped at what
    // the provider was allowed to produce, so an unreported count never bills beyond the call's hold.
    outputTokens: usage.outputTokens ?? (noOutput ? 0 : Math.min(estimateTokens(bytes.response), outputTokenCap)),
    estimated: usage.inputTokens === undefined || (usage.outputTokens === undefined && !noOutput),
    partial,
    hashUpstreamResponse
  }
}

const bufferedResponse = (
  base: CallBase,
  upstream: UpstreamResponse,
  settlement: Settlement["Service"],
  headers: Record<string, string>,
  requestBytes: number,
  witness: { readonly attestation: V3Envelope; readonly iss: string } | undefined,
  idempotent: IdempotentRelay | undefined,
  finish: Finish,
  translation: Translation | undefined,
  sampled: boolean
) =>
  Effect.gen(function*() {
    const body = yield* Effect.tryPromise({
      try: () => readAll(upstream.body),
      catch: () =>
        new ApiError({
          status: 502,
          code: "upstream_error",
          message: `The upstream provider "${base.target.provider.slug}" broke off its answer.`,
          extra: { provider: base.target.provider.slug, provider_status: upstream.status }
        })
    }).pipe(Effect.ensuring(Effect.sync(upstream.done)))
    let parsed: unknown
    try {
      parsed = JSON.parse(body.toString("utf8"))
    } catch {
      parsed = undefined
    }
    // A 2xx answer that is not JSON is nothing the client could use: 502, and nothing is billed.
    if (parsed === undefined) {
      return yield* malformedAnswer(base.target.provider.slug, upstream.status)
    }
    // The client gets the answer in its own format; an answer that is not the shape its format promises is a 502
    // and nothing is billed (nothing usable was delivered).
    let clientAnswer: Uint8Array = body
    if (translation !== undefined) {
      try {
        clientAnswer = Buffer.from(JSON.stringify(translation.response(parsed, upstream.headers)))
      } catch (e) {
        if (!(e instanceof MalformedUpstream)) throw e
        return yield* malformedAnswer(base.target.provider.slug, upstream.status)
      }
    }
    const { stages } = yield* RequestContext
    stages.end("upstream")
    const hashUpstreamResponse = sha256HexSync(body)
    const contentType = translation === undefined && typeof upstream.headers["content-type"] === "string"
      ? upstream.headers["content-type"]
      : "application/json"
    /**
     * The answer from the sealed receipt: v2 headers, and the gateway's countersignature of the client's attestation,
     * signed with the receipt's key inside the settlement (so never with a key rotated meanwhile).
     */
    const render = async (receipt: { readonly jti: string; readonly v2: unknown } | undefined, signer: Signer): Promise<StoredResponse> => {
      const receiptHeaders: Record<string, string> = { "content-type": contentType }
      if (receipt !== undefined) {
        receiptHeaders["x-service-receipt-v2"] = Buffer.from(JSON.stringify(receipt.v2)).toString("base64")
        receiptHeaders["x-service-receipt-v2-jti"] = receipt.jti
      }
      if (witness === undefined) return { status: upstream.status, headers: receiptHeaders, body: clientAnswer, streamed: false }
      // The gateway witnesses the client's attestation: provider, model and the upstream byte hashes.
      const countersignature = await countersignAttestation({
        attestation: witness.attestation,
        provider: base.target.provider.slug,
        model: base.target.model.id,
        hashUpstreamRequest: base.hashUpstreamRequest,
        hashUpstreamResponse,
        iss: witness.iss,
        signer,
        receiptJti: receipt?.jti ?? null,
        envelopeHash: envelopeHashSync,
        ...(base.translation === undefined ? {} : { translation: { from: base.translation.from, to: base.translation.to } })
      })
      receiptHeaders["x-service-receipt-v3"] = Buffer.from(JSON.stringify(countersignature)).toString("base64")
      return { status: upstream.status, headers: receiptHeaders, body: clientAnswer, streamed: false }
    }
    // With an Idempotency-Key, a 2xx answer is stored by the settlement itself (same statement as the debit).
    const record = idempotent !== undefined && upstream.status >= 200 && upstream.status < 300 ? { ...idempotent, render } : undefined
    const metered = meteredCall(base, translation?.usage?.(parsed, upstream.headers) ?? usageFromJson(parsed), { request: requestBytes, response: body.byteLength }, false, hashUpstreamResponse)
    // A settlement that fails wrote nothing: the caller's error handler gives the hold back now, not at its expiry.
    const settled = yield* settlement.settle({ ...metered, response: record, render }).pipe(spanIf(sampled, "relay.settle"))
    stages.end("settle")
    yield* finish(settled.billedMicros, metered.inputTokens + metered.outputTokens, record !== undefined && settled.response !== undefined)
    const answer = settled.response!
    stages.end("receipt-headers")
    const { "content-type": answerType, ...answerHeaders } = answer.headers
    return HttpServerResponse.uint8Array(answer.body, {
      status: answer.status,
      contentType: answerType,
      headers: { ...headers, ...answerHeaders }
    })
  })

const STREAM_CONTENT_TYPE = "text/event-stream; charset=utf-8"
const STREAM_HEADERS = { "cache-control": "no-cache, no-store, must-revalidate", "x-accel-buffering": "no" }
const streamHeaders = { "content-type": STREAM_CONTENT_TYPE, ...STREAM_HEADERS }
const encoder = new TextEncoder()

/**
 * The `event: receipt-v2` frame after the upstream's last frame (`data: [DONE]`, Anthropic's message_stop, the
 * Responses API's response.completed); nothing when the call has no receipt.
 */
const receiptTrailer = (receipt: { readonly v2: unknown } | undefined): Uint8Array =>
  receipt === undefined ? new Uint8Array() : encoder.encode(`event: receipt-v2\ndata: ${JSON.stringify(receipt.v2)}\n\n`)

/**
 * Streams the upstream SSE bytes to the client as they arrive. A side fold hashes the exact bytes and reads
 * usage; at the end the call is settled and the `event: receipt-v2` trailer appended. An upstream that cuts the
 * stream ends ours cleanly without a trailer; a client that goes away interrupts the stream, which aborts the
 * upstream request. Either way what was delivered is metered (`partial`). With an Idempotency-Key, a stream that
 * ended whole has its transcript (the exact bytes sent, trailer included) stored by its settlement.
 */
const streamedResponse = (
  base: CallBase,
  upstream: UpstreamResponse,
  settlement: Settlement["Service"],
  headers: Record<string, string>,
  requestBytes: number,
  idempotent: IdempotentRelay | undefined,
  finish: Finish,
  translator: StreamTranslator | undefined
) => {
  const hasher = createHash("sha256")
  /** The upstream bytes relayed so far, kept only for an idempotent call's transcript. */
  const relayed: Array<Uint8Array> = []
  const reader = createSseUsageReader()
  const textDecoder = new TextDecoder()
  let relayedBytes = 0
  let cut = false
  let settled = false

  const settle = (partial: boolean) =>
    Effect.suspend(() => {
      if (settled) return Effect.succeed(undefined)
      settled = true
      const record = partial || idempotent === undefined ? undefined : {
        ...idempotent,
        render: async (receipt: { readonly v2: unknown } | undefined): Promise<StoredResponse> => ({
          status: 200,
          headers: streamHeaders,
          body: Buffer.concat([...relayed, receiptTrailer(receipt)]),
          streamed: true
        })
      }
      const metered = meteredCall(base, translator?.usage?.() ?? reader.usage(), { request: requestBytes, response: relayedBytes }, partial, hasher.copy().digest("hex"))
      return settlement.settle({ ...metered, response: record }).pipe(
        Effect.tap((s) => finish(s.billedMicros, metered.inputTokens + metered.outputTokens, s.response !== undefined)),
        Effect.map((s) => s.receipt)
      )
    })

  const body = Stream.fromAsyncIterable(upstream.body, (e) => e).pipe(
    Stream.map((chunk: Uint8Array) => {
      hasher.update(chunk)
      relayedBytes += chunk.byteLength
      const text = textDecoder.decode(chunk, { stream: true })
      reader.push(text)
      // Translated: the client gets the same answer as the other format's frames (a frame that cannot be read
      // throws, which ends the stream as a cut one).
      const out = translator === undefined ? chunk : encoder.encode(translator.push(text, chunk))
      if (idempotent !== undefined) relayed.push(out)
      return out
    }),
    Stream.filter((chunk) => chunk.byteLength > 0),
    Stream.catchCause(() => {
      cut = true
      return Stream.empty
    }),
    Stream.concat(
      Stream.unwrap(Effect.gen(function*() {
        // A translated stream whose provider never sent its end-of-answer event is incomplete: no trailer. So is a
        // Responses stream that ended before its terminal event (response.completed, .incomplete or .failed).
        if (cut || (translator !== undefined && !translator.complete())) return Stream.empty
        if (translator === undefined && base.capability === "responses" && !reader.responseEnded()) return Stream.empty
        const receipt = yield* settle(false)
        if (receipt === undefined) return Stream.empty
        return Stream.make(receiptTrailer(receipt))
      }))
    ),
    Stream.ensuring(
      Effect.suspend(() => {
        upstream.done()
        upstream.body.destroy()
        // Whatever happened, the hold and the slot go back (a no-op after a settlement's finish).
        return settle(true).pipe(Effect.ensuring(finish(0n, 0, false)))
      }).pipe(Effect.ignore)
    )
  )
  return HttpServerResponse.stream(body, {
    status: 200,
    contentType: STREAM_CONTENT_TYPE,
    headers: { ...headers, ...STREAM_HEADERS }
  })
}
