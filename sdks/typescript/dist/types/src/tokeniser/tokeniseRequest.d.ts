import { type SessionOptions, type TokeniserSession } from "./session.ts";
import type { AliasMap } from "./types.ts";
export type Route = "chat.completions" | "messages" | "embeddings";
export interface TokeniseRequestOptions extends SessionOptions {
    /** An existing session for this request; by default a fresh one is created from the options. */
    readonly session?: TokeniserSession;
    /**
     * Aborting it (the client went away, the time budget ran out) stops the work between two windows of
     * text; the promise then rejects with the signal's reason and nothing may be sent.
     */
    readonly signal?: AbortSignal;
}
export interface TokenisedRequest {
    /** The request body with every text field tokenised (a copy; the input is not modified). */
    readonly body: unknown;
    /** The exact bytes to send: UTF-8 of the RFC 8785 (JCS) form of `body`, so egress_sha256 hashes them. */
    readonly bodyBytes: Uint8Array;
    /** Alias -> original, for detokenising the response. Keep it on the device. */
    readonly map: AliasMap;
    /** Categories and counts of replaced values (never values), for the v3 attestation. */
    readonly detectorsFired: Record<string, number>;
    /** True when the name model failed and `failOpen` let the request through without name detection. */
    readonly nameModelSkipped: boolean;
}
export declare class InvalidRequestBody extends Error {
    readonly _tag = "InvalidRequestBody";
    constructor(message: string);
}
/**
 * Tokenises the user text of one OpenAI chat completions, Anthropic messages or embeddings request:
 * `messages[].content` (strings or text parts), Anthropic `system`, embeddings `input`. Every other
 * field is left untouched. A streamed chat completion gets `stream_options.include_usage: true` so the
 * provider reports usage (the gateway relays bytes unchanged and cannot add it).
 * Rejects with NameModelUnavailable when names are enabled, the model fails and failOpen is not set,
 * and with `opts.signal`'s reason when it is aborted: the caller must then send nothing.
 */
export declare const tokeniseRequest: (route: Route, body: unknown, opts?: TokeniseRequestOptions) => Promise<TokenisedRequest>;
