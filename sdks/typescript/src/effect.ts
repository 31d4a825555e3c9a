/**
 * @privacy-relay/sdk/effect: the same operations as Effects. Failures are `RelayFailure` values in the error channel,
 * tagged by family and carrying the gateway's stable `code`, `status` and `requestId`; interrupting the fiber aborts
 * the HTTP call.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { CallOptions, RelayClientOptions, RelayStream, WithMeta } from "./RelayClient.ts"
import { RelayError } from "./errors.ts"
import { RelayClient } from "./index.ts"

export class RelayFailure extends Schema.TaggedError<RelayFailure>()("RelayFailure", {
  status: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  requestId: Schema.optional(Schema.String)
}) {}

const failure = (error: unknown): RelayFailure =>
  error instanceof RelayError
    ? new RelayFailure({ status: error.status, code: error.code, message: error.message, ...(error.requestId === undefined ? {} : { requestId: error.requestId }) })
    : new RelayFailure({ status: 0, code: "unexpected", message: error instanceof Error ? error.message : String(error) })

/** The client as a service. */
export class Relay extends Context.Service<Relay, RelayClient>()("@privacy-relay/sdk/Relay") {
  static readonly layer = (options: RelayClientOptions) => Layer.effect(Relay, Effect.try({ try: () => new RelayClient(options), catch: failure }))
}

type Json = Record<string, any>
const call = <A>(run: (client: RelayClient, signal: AbortSignal) => Promise<A>) =>
  Effect.flatMap(Effect.service(Relay), (client) => Effect.tryPromise({ try: (signal) => run(client, signal), catch: failure }))

export const chatCompletion = (body: Json, options: CallOptions = {}): Effect.Effect<WithMeta<Json>, RelayFailure, Relay> =>
  call((c, signal) => c.chat.completions.create({ ...body, stream: false }, { ...options, signal }) as Promise<WithMeta<Json>>)

export const chatCompletionStream = (body: Json, options: CallOptions = {}): Effect.Effect<RelayStream<Json>, RelayFailure, Relay> =>
  call((c, signal) => c.chat.completions.create({ ...body, stream: true }, { ...options, signal }))

export const messages = (body: Json, options: CallOptions = {}): Effect.Effect<WithMeta<Json>, RelayFailure, Relay> =>
  call((c, signal) => c.messages.create({ ...body, stream: false }, { ...options, signal }) as Promise<WithMeta<Json>>)

export const responses = (body: Json, options: CallOptions = {}): Effect.Effect<WithMeta<Json>, RelayFailure, Relay> =>
  call((c, signal) => c.responses.create({ ...body, stream: false }, { ...options, signal }) as Promise<WithMeta<Json>>)

export const responsesStream = (body: Json, options: CallOptions = {}): Effect.Effect<RelayStream<Json>, RelayFailure, Relay> =>
  call((c, signal) => c.responses.create({ ...body, stream: true }, { ...options, signal }))

export const embeddings = (body: Json, options: CallOptions = {}): Effect.Effect<WithMeta<Json>, RelayFailure, Relay> =>
  call((c, signal) => c.embeddings.create(body, { ...options, signal }))

export const listModels = (options: CallOptions = {}): Effect.Effect<Json, RelayFailure, Relay> => call((c, signal) => c.models.list({ ...options, signal }))

export const verifyReceipt = (headerValueOrEnvelope: unknown) => call((c) => c.rest.receipts.verify(headerValueOrEnvelope))
