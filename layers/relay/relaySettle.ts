/**
 * The last step of a relay call: the answer read (buffered) or relayed as it arrives (streamed), metered from the
 * provider's usage, settled (debit, receipts, the stored response of an idempotent call) and sealed for the client.
 */
import { Effect, Stream } from "effect"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import type { StoredResponse } from "../../services/Idempotency.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import type { CompletedCall, Settlement } from "../../services/Settlement.ts"
import type { V3Envelope } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { countersignAttestation } from "../../sdks/typescript/src/wire/receipts/countersign.ts"
import type { Signer } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { envelopeHashSync } from "../crypto/envelopeHashSync.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { createSseUsageReader, type UpstreamUsage, usageFromJson } from "../../src/relay/usage.ts"
import type { StreamTranslator } from "../../src/relay/translate/streamTranslator.ts"
import type { Translation } from "../../src/relay/translate/translation.ts"
import { MalformedUpstream } from "../../src/relay/translate/translationError.ts"
import type { AdmittedCall, IdempotentRelay } from "./relayAdmission.ts"
import { spanIf } from "./spanIf.ts"
import { readAll } from "./upstreamBody.ts"
import type { UpstreamResponse } from "./UpstreamClient.ts"

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

export type CallBase = Omit<CompletedCall, "providerResponseId" | "inputTokens" | "outputTokens" | "estimated" | "partial" | "hashUpstreamResponse"> & {
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

export const bufferedResponse = (
  base: CallBase,
  upstream: UpstreamResponse,
  settlement: Settlement["Service"],
  headers: Record<string, string>,
  requestBytes: number,
  /** The attestation to countersign, with its JCS text as the attestation check built it (for attestation_sha256). */
  witness: { readonly attestation: V3Envelope; readonly envelopeJcs: () => string; readonly iss: string } | undefined,
  idempotent: IdempotentRelay | undefined,
  call: AdmittedCall,
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
        // The attestation's JCS text was built by the signature check: hashed here, not canonicalised again.
        envelopeHash: (envelope) => envelope === witness.attestation ? sha256HexSync(witness.envelopeJcs()) : envelopeHashSync(envelope),
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
    yield* call.finish(settled.billedMicros, metered.inputTokens + metered.outputTokens, record !== undefined && settled.response !== undefined)
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
export const streamedResponse = (
  base: CallBase,
  upstream: UpstreamResponse,
  settlement: Settlement["Service"],
  headers: Record<string, string>,
  requestBytes: number,
  idempotent: IdempotentRelay | undefined,
  call: AdmittedCall,
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
        Effect.tap((s) => call.finish(s.billedMicros, metered.inputTokens + metered.outputTokens, s.response !== undefined)),
        Effect.map((s) => s.receipt)
      )
    })

  // Read on the body's 'readable' events rather than through its async iterator (an async generator whose every chunk
  // takes several promise hops before the fiber resumes): timed with marks at load ~8, the upstream's first chunk
  // reached the client's socket 0.09-0.12 ms after undici had it, against 0.20-0.26 ms through the iterator.
  const body = NodeStream.fromReadable<Uint8Array, unknown>({ evaluate: () => upstream.body, onError: (e) => e }).pipe(
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
        // Whatever happened, the call's scope closes: the hold and the slot go back (a no-op after a settlement's finish).
        return settle(true).pipe(Effect.ensuring(call.release))
      }).pipe(Effect.ignore)
    )
  )
  return HttpServerResponse.stream(body, {
    status: 200,
    contentType: STREAM_CONTENT_TYPE,
    headers: { ...headers, ...STREAM_HEADERS }
  })
}
