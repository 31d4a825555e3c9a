/**
 * The Privacy Relay client: every relay call is tokenised and attested on this device, sent to the gateway, and
 * answered with the originals restored here (streams too). Gateway-locked: it talks only to an https (or loopback)
 * URL that answers the gateway identity probe. Runtime specifics (files, the device key) come from a Platform, so
 * the same class serves Node, Deno and browsers (see index.ts and browser.ts).
 */
import type { EngineIdentity } from "../../../src/attestation/v3.ts";
import type { VerificationResult } from "../../../src/receipts/verify.ts";
import { type NameModelSetting } from "./engine.ts";
import type { Platform } from "./platform.ts";
import { RestApi } from "./rest.ts";
export interface RelayClientOptions {
    /** The gateway's base URL: https, or http to a loopback address for development. */
    readonly gatewayUrl: string;
    /** The gateway key (`svc_...`). Prefer `apiKeyFile` on servers: a key in code or argv leaks. */
    readonly apiKey?: string;
    /** A file (mode 0600) holding the gateway key (Node and Deno). */
    readonly apiKeyFile?: string;
    /** A portal token (`spt_...`) for the portal operations (keys, receipts list, webhooks, billing). */
    readonly portalToken?: string;
    /** `builtin` (default), `off`, or the URL of a name model service. Fail-closed: if it fails, nothing is sent. */
    readonly nameModel?: NameModelSetting;
    /** Retries after the first attempt on 429, 5xx and network errors (default 2). */
    readonly retries?: number;
    /** Per attempt (default 60,000 ms). */
    readonly timeoutMs?: number;
    /** A fetch to reach the gateway with (default: the global fetch). */
    readonly fetch?: typeof fetch;
    /** The device attester key pair (default: the platform's: a file in the config directory on Node and Deno). */
    readonly deviceKey?: CryptoKeyPair;
    /** Stable (keyed) aliases for embeddings, so equal inputs embed equally (default true; docs: tokeniser). */
    readonly stableEmbeddingAliases?: boolean;
    /** Override of the engine identity (tests, custom builds). */
    readonly engine?: EngineIdentity;
}
/** Per-call options. */
export interface CallOptions {
    readonly signal?: AbortSignal;
    readonly timeoutMs?: number;
    /** Sent as Idempotency-Key; one is generated for every relay call and every retried write when absent. */
    readonly idempotencyKey?: string;
    /** W3C traceparent to continue your trace; a new trace is started when absent. */
    readonly traceparent?: string;
}
/** What every answer of a relay call carries besides the provider's shape. */
export interface RelayMeta {
    /** The gateway's X-Request-Id. */
    readonly requestId: string | undefined;
    /** The decoded v2 receipt (header or stream trailer); undefined when the key gets none (demo keys). */
    readonly receipt: Record<string, unknown> | undefined;
    /** The receipt verified offline against the gateway's JWKS; undefined when there is no receipt. */
    readonly receiptVerified: boolean | undefined;
    readonly receiptVerification: VerificationResult | undefined;
    /** The gateway's countersignature of this device's attestation (X-Service-Receipt-V3), decoded. */
    readonly countersignature: Record<string, unknown> | undefined;
    /** The tokenised request: exactly what left this device. */
    readonly tokenisedRequest: unknown;
}
export type WithMeta<T> = T & RelayMeta;
/** A streamed answer: chunks (OpenAI) or events (Anthropic) with originals restored, then `receipt` once it ends. */
export interface RelayStream<T> extends AsyncIterable<T> {
    readonly requestId: string | undefined;
    readonly tokenisedRequest: unknown;
    /** Set once the stream has ended. */
    receipt: Record<string, unknown> | undefined;
    receiptVerified: boolean | undefined;
    receiptVerification: VerificationResult | undefined;
    /** Stops reading and cancels the call. */
    readonly abort: () => void;
}
type Json = Record<string, any>;
export declare class RelayClientCore {
    #private;
    readonly gatewayUrl: string;
    readonly rest: RestApi;
    /**
     * A `fetch` for the official `openai` and `@anthropic-ai/sdk` packages (their `fetch` option): their requests are
     * tokenised and attested here, sent to this client's gateway with this client's key, and their answers (streams
     * included) come back with the originals restored. Their own API key and base URL are not used.
     */
    readonly fetch: typeof fetch;
    readonly chat: {
        readonly completions: {
            readonly create: {
                (body: Json & {
                    stream: true;
                }, options?: CallOptions): Promise<RelayStream<Json>>;
                (body: Json, options?: CallOptions): Promise<WithMeta<Json>>;
            };
        };
    };
    readonly messages: {
        readonly create: {
            (body: Json & {
                stream: true;
            }, options?: CallOptions): Promise<RelayStream<Json>>;
            (body: Json, options?: CallOptions): Promise<WithMeta<Json>>;
        };
    };
    readonly embeddings: {
        readonly create: (body: Json, options?: CallOptions) => Promise<WithMeta<Json>>;
    };
    readonly models: {
        readonly list: (options?: CallOptions) => Promise<Json>;
    };
    constructor(options: RelayClientOptions, platform: Platform);
}
export {};
