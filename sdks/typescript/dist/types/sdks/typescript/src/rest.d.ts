/**
 * The gateway's REST capability set beside the relay: keys, receipts, transparency, webhooks, billing, self-service
 * and demo keys. Routes that the gateway reserves for the portal take the client's `portalToken`; the others its
 * gateway key, or nothing. Writes carry an Idempotency-Key (generated when the caller gives none) so a retried write
 * is never applied twice; reads are retried freely.
 */
import type { VerificationResult } from "../../../src/receipts/verify.ts";
import { type Transport } from "./transport.ts";
type Json = Record<string, any>;
export interface RestOptions {
    readonly signal?: AbortSignal;
    readonly timeoutMs?: number;
    readonly idempotencyKey?: string;
    readonly traceparent?: string;
}
export declare class RestApi {
    #private;
    constructor(input: {
        readonly gatewayUrl: string;
        readonly transport: Transport;
        readonly apiKey: () => string;
        readonly portalToken: string | undefined;
        readonly verify: (envelope: unknown) => Promise<VerificationResult>;
    });
    readonly keys: {
        create: (input?: {
            name?: string;
            permissions?: Array<string>;
            models?: Array<string>;
            rotation_days?: number;
            org_id?: string;
        }, o?: RestOptions) => Promise<Json>;
        list: (query?: {
            org_id?: string;
        }, o?: RestOptions) => Promise<Json>;
        update: (id: string, changes: {
            name?: string | null;
            permissions?: Array<string> | null;
            models?: Array<string> | null;
            rotation_days?: number | null;
        }, o?: RestOptions) => Promise<Json>;
        rotate: (id: string, o?: RestOptions) => Promise<Json>;
        revoke: (id: string, o?: RestOptions) => Promise<Json>;
        /** The scopes and model allowlist of a key, as the portal lists it. */
        scopes: (id: string, o?: RestOptions) => Promise<{
            permissions: Array<string>;
            models: Array<string> | null;
        } | undefined>;
    };
    readonly receipts: {
        /** Offline, against the gateway's JWKS (fetched once, again on an unknown kid). */
        verify: (headerValueOrEnvelope: unknown) => Promise<VerificationResult>;
        /** Online: the gateway's own verify route. */
        verifyOnline: (headerValueOrEnvelope: unknown, o?: RestOptions) => Promise<Json>;
        list: (query?: {
            limit?: number;
            cursor?: string;
            from?: string;
            to?: string;
            model?: string;
        }, o?: RestOptions) => Promise<Json>;
        get: (jti: string, o?: RestOptions) => Promise<Json>;
        countersign: (input: Json, o?: RestOptions) => Promise<Json>;
        signedTreeHead: (o?: RestOptions) => Promise<Json>;
        inclusionProof: (jti: string, o?: RestOptions) => Promise<Json>;
    };
    readonly webhooks: {
        endpoints: {
            create: (input: {
                url: string;
                events?: Array<string>;
            }, o?: RestOptions) => Promise<Json>;
            list: (o?: RestOptions) => Promise<Json>;
            get: (id: string | number, o?: RestOptions) => Promise<Json>;
            update: (id: string | number, changes: Json, o?: RestOptions) => Promise<Json>;
            delete: (id: string | number, o?: RestOptions) => Promise<Json>;
            rotateSecret: (id: string | number, o?: RestOptions) => Promise<Json>;
            test: (id: string | number, o?: RestOptions) => Promise<Json>;
            resume: (id: string | number, o?: RestOptions) => Promise<Json>;
        };
        deliveries: {
            list: (query?: Record<string, string | number>, o?: RestOptions) => Promise<Json>;
            get: (id: string | number, o?: RestOptions) => Promise<Json>;
            replay: (id: string | number, o?: RestOptions) => Promise<Json>;
        };
    };
    readonly billing: {
        balance: (o?: RestOptions) => Promise<Json>;
        topUp: (input: {
            amount_usd: string | number;
        }, o?: RestOptions) => Promise<Json>;
        redeemLicence: (input: {
            code: string;
        }, o?: RestOptions) => Promise<Json>;
        ledger: (query?: Record<string, string | number>, o?: RestOptions) => Promise<Json>;
        usage: (query?: Record<string, string | number>, o?: RestOptions) => Promise<Json>;
    };
    /** A free-tier key (shown once). No auth. */
    readonly selfServiceKey: (input?: {
        email?: string;
        name?: string;
    }, o?: RestOptions) => Promise<Json>;
    /** An anonymous demo key: $2, 24 hours, relay only, no receipts (shown once). No auth. */
    readonly demoKey: (o?: RestOptions) => Promise<Json>;
}
/** A receipt as a header value (standard base64 of the JSON), a JSON string or an object: the object. */
export declare const decodeReceipt: (value: unknown) => unknown;
export {};
