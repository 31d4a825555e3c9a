/**
 * @privacy-relay/sdk/effect: the same operations as Effects. Failures are `RelayFailure` values in the error channel,
 * tagged by family and carrying the gateway's stable `code`, `status` and `requestId`; interrupting the fiber aborts
 * the HTTP call.
 */
import { Context, Effect, Layer, Schema } from "effect";
import type { CallOptions, RelayClientOptions, RelayStream, WithMeta } from "./RelayClient.ts";
import { RelayClient } from "./index.ts";
declare const RelayFailure_base: Schema.Class<RelayFailure, Schema.TaggedStruct<"RelayFailure", {
    readonly status: Schema.Number;
    readonly code: Schema.String;
    readonly message: Schema.String;
    readonly requestId: Schema.optional<Schema.String>;
}>, import("effect/Cause").YieldableError>;
export declare class RelayFailure extends RelayFailure_base {
}
declare const Relay_base: Context.ServiceClass<Relay, "@privacy-relay/sdk/Relay", RelayClient>;
/** The client as a service. */
export declare class Relay extends Relay_base {
    static readonly layer: (options: RelayClientOptions) => Layer.Layer<Relay, RelayFailure, never>;
}
type Json = Record<string, any>;
export declare const chatCompletion: (body: Json, options?: CallOptions) => Effect.Effect<WithMeta<Json>, RelayFailure, Relay>;
export declare const chatCompletionStream: (body: Json, options?: CallOptions) => Effect.Effect<RelayStream<Json>, RelayFailure, Relay>;
export declare const messages: (body: Json, options?: CallOptions) => Effect.Effect<WithMeta<Json>, RelayFailure, Relay>;
export declare const embeddings: (body: Json, options?: CallOptions) => Effect.Effect<WithMeta<Json>, RelayFailure, Relay>;
export declare const listModels: (options?: CallOptions) => Effect.Effect<Json, RelayFailure, Relay>;
export declare const verifyReceipt: (headerValueOrEnvelope: unknown) => Effect.Effect<import("../../../src/receipts/verify.ts").VerificationResult, RelayFailure, Relay>;
export {};
