/**
 * One relay call after authentication, in the pipeline's order (docs/relay.md), as named steps: attest (engine,
 * attestation, body shape, egress policy: 403/428/400), pick candidates (model and fallbacks: 404/403), admit (limits
 * 429, balance hold 402, the key's slot: an owned scoped resource, relayAdmission.ts; with an Idempotency-Key the
 * stored response is looked for meanwhile, from before the attestation check until the admission), try upstream
 * (tryUpstream.ts), settle (relaySettle.ts). Nothing is forwarded unless every check passed.
 */
import { Effect, Exit, Fiber, Result } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { Idempotency, invalidIdempotencyKey } from "../../services/Idempotency.ts"
import type { GatewayPrincipal } from "../../services/Keys.ts"
import { ProviderRouter, type RouteTarget } from "../../services/ProviderRouter.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import { Settlement } from "../../services/Settlement.ts"
import type { EngineAllowlist } from "../../sdks/typescript/src/wire/attestation/engine-allowlist.ts"
import { type AttestationVerdict, verifyAttestation } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { egressPolicyViolation } from "../../sdks/typescript/src/wire/egressPolicy.ts"
import { issuesReceipts } from "../../src/keys/demo.ts"
import { nodeAttestationCrypto } from "../crypto/nodeAttestationCrypto.ts"
import { DEFAULT_HOLD_OUTPUT_TOKENS, maxCostHoldMicros } from "../../src/billing/pricing.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { ROUTING_DECISION_HEADER, ROUTING_HEADER } from "../../src/routing/strategy.ts"
import { capabilityOf, isShapeProblem, readRelayShape, type RelayRequestShape, type RelayRoute } from "../../src/relay/requestShape.ts"
import { readBodyBytes } from "../http/body.ts"
import { requestBodyJson } from "../crypto/nodeSha256.ts"
import { UnsupportedTool, unsupportedToolError, UntranslatableField, untranslatableError } from "../../src/relay/translate/translationError.ts"
import { bodyHashOf, replay } from "../http/idempotent.ts"
import { expandPooledKeys, orderByHealth } from "./fallback.ts"
import type { KeyRotation } from "./keyRotation.ts"
import { type PreparedRequest, prepareRequest } from "./preparedRequest.ts"
import type { ProviderHealth } from "./providerHealth.ts"
import { RoutingPolicies } from "../../services/RoutingPolicies.ts"
import { admitCall, type IdempotentRelay, releaseOnError } from "./relayAdmission.ts"
import { bufferedResponse, streamedResponse } from "./relaySettle.ts"
import { spanIf } from "./spanIf.ts"
import { tryUpstream } from "./tryUpstream.ts"

export { readAll, upstreamError } from "./upstreamBody.ts"

export interface RelaySettings {
  readonly allowlist: EngineAllowlist
  /** Providers that failed recently, skipped (for a cool-down) when a call has somewhere else to go. */
  readonly health: ProviderHealth
  /** The rotation over a provider's pooled keys, each skipped for a cool-down after failing. */
  readonly keys: KeyRotation
}

/** A request that passed the attestation, shape and egress checks. */
interface Attested {
  readonly verdict: Extract<AttestationVerdict, { readonly ok: true }>
  readonly clientBody: Record<string, unknown>
  /** The attested egress_sha256: checked to equal the JCS SHA-256 of this exact body. */
  readonly clientBodyHash: string
  readonly shape: RelayRequestShape
}

/**
 * With an Idempotency-Key, the look-up of the stored response, sent before anything else is checked: a replay needs
 * no fresh attestation, and its round trip overlaps the checks that follow (attestation, shape, egress, routing). The
 * key's slot is taken by the admission; a response stored between this look-up and that admission is caught by the
 * slot's done mark.
 */
const startLookup = (route: RelayRoute, principal: GatewayPrincipal, idempotencyKey: string | undefined, bodyBytes: Uint8Array) =>
  Effect.gen(function*() {
    if (idempotencyKey === undefined) return undefined
    const invalid = invalidIdempotencyKey(idempotencyKey)
    if (invalid !== undefined) return yield* invalid
    const idem: IdempotentRelay = { scope: `${principal.orgId}|${route}`, key: idempotencyKey, bodyHash: bodyHashOf(bodyBytes) }
    const lookup = yield* Effect.forkChild((yield* Idempotency).find(idem), { startImmediately: true })
    // Lets the look-up's query go out before the (synchronous) signature check takes the thread.
    yield* Effect.yieldNow
    return { idem, lookup }
  })

/**
 * Step 1: the attestation (403/428), then the body's shape (400) and the egress policy (400).
 */
const attest = (route: RelayRoute, settings: RelaySettings, bodyBytes: Uint8Array) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const ctx = yield* RequestContext
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
    if (!verdict.ok) return yield* new ApiError({ status: verdict.status, code: verdict.code, message: verdict.message })
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
    return { verdict, clientBody, clientBodyHash, shape } as Attested
  })

/**
 * Step 2: the model's target (404/403) and the organisation's fallbacks, each prepared in its provider's format,
 * ordered by provider health and expanded over pooled keys.
 */
const pickCandidates = (route: RelayRoute, principal: GatewayPrincipal, settings: RelaySettings, attested: Attested, bodyBytes: Uint8Array) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const router = yield* ProviderRouter
    const { shape } = attested
    const capability = capabilityOf[route]
    // Routing (off unless X-Service-Routing asks) sees metadata only: sizes and caps, never the body's content.
    const target = yield* router.resolve({
      modelId: shape.model,
      capability,
      principal,
      routing: { header: request.headers[ROUTING_HEADER], bodyBytes: bodyBytes.byteLength, maxOutputTokens: shape.maxOutputTokens }
    })
    // A model whose provider speaks the other conversation format: the body sent upstream is the translated one,
    // and the receipt's hash_upstream_request hashes exactly those (JCS) bytes.
    const client = { body: attested.clientBody, bytes: bodyBytes, hash: attested.clientBodyHash }
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
    ;(yield* RequestContext).stages.end("routing")
    return { target, candidates }
  })

/** The wallet hold: enough for the most expensive candidate the call may end up at. */
const holdFor = (route: RelayRoute, shape: RelayRequestShape, candidates: ReadonlyArray<PreparedRequest>, bodyBytes: Uint8Array): bigint => {
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
  return holdMicros
}

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
    const settlement = yield* Settlement
    const startedAt = new Date()
    const bodyBytes = yield* readBodyBytes

    const pending = yield* startLookup(route, principal, idempotencyKey, bodyBytes)
    const idem = pending?.idem
    // The checks run while the look-up is in flight; their verdict counts only once it has answered: a replay is
    // answered whatever they say (it needs no fresh attestation), and nothing is admitted unless they all passed.
    const checked = yield* Effect.exit(Effect.flatMap(
      attest(route, settings, bodyBytes),
      (attested) => Effect.map(pickCandidates(route, principal, settings, attested, bodyBytes), (picked) => ({ attested, ...picked }))
    ))
    const admit = (shape: RelayRequestShape, candidates: ReadonlyArray<PreparedRequest>) =>
      admitCall(principal, capabilityOf[route], holdFor(route, shape, candidates, bodyBytes), idem)
    // The checks passed (the attestation is accepted): the admission goes out now, while the look-up is still in
    // flight, so the two round trips overlap. Should the look-up find a replay (or a key conflict), the admission is
    // given back whole, its count in the rate windows included, before the answer; a refused admission (429, 402)
    // waits for the look-up too, since a replay wins over it. The admission runs in this fiber and the look-up is
    // joined after it (it has usually answered by then): run in a fiber of its own, the admission's end reached this
    // fiber ~0.2 ms later at load 8 (timed with marks).
    const admittedEarly = pending !== undefined && Exit.isSuccess(checked)
      ? yield* Effect.exit(admit(checked.value.attested.shape, checked.value.candidates))
      : undefined
    if (pending !== undefined) {
      const taken = admittedEarly !== undefined && Exit.isSuccess(admittedEarly) && admittedEarly.value._tag === "Admitted"
        ? admittedEarly.value
        : undefined
      // A client that goes away while the look-up is still out interrupts this wait: what the admission took goes back.
      const looked = yield* Effect.exit(Fiber.join(pending.lookup)).pipe(
        Effect.onInterrupt(() => taken === undefined ? Effect.void : taken.release)
      )
      ctx.stages.end("idempotency")
      if (Exit.isFailure(looked) || looked.value !== undefined) {
        if (taken !== undefined) yield* taken.withdraw
        return replay((yield* looked)!)
      }
    }
    const { attested, target, candidates } = yield* checked
    const { verdict, clientBody, clientBodyHash, shape } = attested

    const admitted = admittedEarly !== undefined ? yield* admittedEarly : yield* admit(shape, candidates)
    if (admitted._tag === "Replay") return replay(admitted.stored)
    // From here the call owns its admission: every way out either settles it or releases it.
    return yield* releaseOnError(admitted, Effect.gen(function*() {
      const { prepared, upstream, used } = yield* tryUpstream({
        requested: target,
        candidates,
        stream: shape.stream,
        clientHeaders: request.headers,
        ctx,
        health: settings.health,
        keys: settings.keys
      })
      const translation = prepared.translation
      const base = {
        principal,
        target: used,
        capability: route,
        hold: admitted.hold,
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
      const responseHeaders: Record<string, string> = { ...admitted.limitHeaders }
      if (used.routingDecision !== undefined) responseHeaders[ROUTING_DECISION_HEADER] = JSON.stringify(used.routingDecision)
      // Streamed: the stream's end closes the call's scope. Buffered: the answer does, once settled.
      if (shape.stream) {
        return streamedResponse(base, upstream, settlement, responseHeaders, bodyBytes.byteLength, idem, admitted, translation?.stream(clientBody, upstream.headers))
      }
      return yield* bufferedResponse(
        base,
        upstream,
        settlement,
        responseHeaders,
        bodyBytes.byteLength,
        // A demo key gets no receipt of any kind, the countersignature included. A fallback that replaced the body's
        // model relayed a body the client did not attest, so the gateway cannot countersign the attestation for it.
        issuesReceipts(principal) && !prepared.modelRewritten ? { attestation: verdict.attestation, envelopeJcs: verdict.envelopeJcs, iss: config.publicBaseUrl } : undefined,
        idem,
        admitted,
        translation,
        ctx.sampled
      ).pipe(Effect.ensuring(admitted.release))
    }))
  })
