/**
 * The gateway's REST capability set beside the relay: keys, receipts, transparency, webhooks, billing, self-service
 * and demo keys. Routes that the gateway reserves for the portal take the client's `portalToken`; the others its
 * gateway key, or nothing. Writes carry an Idempotency-Key (generated when the caller gives none) so a retried write
 * is never applied twice; reads are retried freely.
 */
import type { GatewayOk, GatewayOperations } from "./api.ts"
import type { VerificationResult } from "./wire/receipts/verify.ts"
import { ConfigurationError } from "./errors.ts"
import { newTraceparent, type Transport } from "./transport.ts"
import { envelopeOrRaw } from "./verify/envelopeInput.ts"

type Json = Record<string, any>

export interface RestOptions {
  readonly signal?: AbortSignal
  readonly timeoutMs?: number
  readonly idempotencyKey?: string
  readonly traceparent?: string
}

type Auth = "key" | "portal" | "none"

/** A provider key to store: an API key, or (aws-bedrock) an AWS key pair whose calls are signed with SigV4. */
export type ByokCredential =
  | { readonly api_key: string }
  | { readonly aws_access_key_id: string; readonly aws_secret_access_key: string; readonly aws_session_token?: string; readonly region: string }

/** A portal session held in the browser's cookies: the CSRF token (readable cookie `pr_csrf`) echoed on writes. */
export interface PortalSession {
  readonly csrfToken: () => string | undefined
}

export class RestApi {
  readonly #gatewayUrl: string
  readonly #transport: Transport
  readonly #apiKey: () => string
  readonly #portalToken: string | undefined
  readonly #portalSession: PortalSession | undefined
  readonly #verify: (envelope: unknown) => Promise<VerificationResult>
  readonly #ready: () => Promise<void>

  constructor(input: {
    readonly gatewayUrl: string
    readonly transport: Transport
    readonly apiKey: () => string
    readonly portalToken: string | undefined
    /** A signed-in portal session (cookies) instead of a portal token: a page served by the gateway itself. */
    readonly portalSession?: PortalSession | undefined
    readonly verify: (envelope: unknown) => Promise<VerificationResult>
    /** The gateway identity probe: passed before any credential is sent. */
    readonly ready: () => Promise<void>
  }) {
    this.#ready = input.ready
    this.#gatewayUrl = input.gatewayUrl
    this.#transport = input.transport
    this.#apiKey = input.apiKey
    this.#portalToken = input.portalToken
    this.#portalSession = input.portalSession
    this.#verify = input.verify
  }

  /** One REST call; resolves to the success body typed from the gateway's OpenAPI document for `_operation`. */
  async #call<Op extends keyof GatewayOperations>(_operation: Op, method: string, path: string, auth: Auth, body?: unknown, options: RestOptions = {}): Promise<GatewayOk<Op>> {
    const headers: Record<string, string> = { accept: "application/json", traceparent: options.traceparent ?? newTraceparent() }
    if (auth === "key") headers.authorization = `Bearer ${this.#apiKey()}`
    const write = method !== "GET"
    if (auth === "portal") {
      if (this.#portalToken !== undefined) headers.authorization = `Bearer ${this.#portalToken}`
      else if (this.#portalSession !== undefined) {
        // The session cookie goes by itself (same origin); a write proves it comes from the portal's own page.
        const csrf = this.#portalSession.csrfToken()
        if (write && csrf !== undefined) headers["x-csrf-token"] = csrf
      } else {
        throw new ConfigurationError({ status: 0, code: "configuration_error", message: `${method} ${path} needs a portal token: give portalToken (spt_...) to the client.` })
      }
    }
    // A key or token goes only to a URL that answered the gateway identity probe.
    if (auth !== "none") await this.#ready()
    if (body !== undefined) headers["content-type"] = "application/json"
    if (write) headers["idempotency-key"] = options.idempotencyKey ?? crypto.randomUUID()
    const credentials: RequestCredentials = auth === "portal" && this.#portalToken === undefined ? "same-origin" : "omit"
    const response = await this.#transport.send(
      `${this.#gatewayUrl}${path}`,
      { method, headers, credentials, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
      { retry: true, signal: options.signal, timeoutMs: options.timeoutMs }
    )
    const text = await response.text()
    // The body as the gateway's OpenAPI document describes it (test/layers/http/api/OpenApiConformance validates real answers against it
    // answer what it says); a 204 has none.
    return (text === "" ? {} : JSON.parse(text)) as GatewayOk<Op>
  }

  readonly keys = {
    create: (input: { name?: string; permissions?: Array<string>; models?: Array<string>; rotation_days?: number; org_id?: string } = {}, o?: RestOptions) =>
      this.#call("createKey", "POST", "/api/keys", "portal", input, o),
    list: (query: { org_id?: string } = {}, o?: RestOptions) => this.#call("listKeys", "GET", `/api/v1/keys${queryString(query)}`, "portal", undefined, o),
    update: (id: string, changes: { name?: string | null; permissions?: Array<string> | null; models?: Array<string> | null; rotation_days?: number | null }, o?: RestOptions) =>
      this.#call("updateKey", "PATCH", `/api/keys/${encodeURIComponent(id)}`, "portal", changes, o),
    rotate: (id: string, o?: RestOptions) => this.#call("rotateKey", "POST", `/api/keys/${encodeURIComponent(id)}/rotate`, "portal", {}, o),
    revoke: (id: string, o?: RestOptions) => this.#call("revokeKey", "POST", `/api/keys/${encodeURIComponent(id)}/revoke`, "portal", {}, o),
    /** The scope vocabulary (`messages`, `completions`, `buffer`): each scope's meaning and the routes it allows. No auth. */
    vocabulary: (o?: RestOptions) => this.#call("listScopes", "GET", "/api/v1/keys/scopes", "none", undefined, o),
    /** The scopes and model allowlist of a key, as the portal lists it. */
    scopes: async (id: string, o?: RestOptions) => {
      const { keys } = await this.#call("listKeys", "GET", "/api/v1/keys", "portal", undefined, o)
      const key = keys.find((k) => k.id === id)
      return key === undefined ? undefined : { permissions: key.permissions, models: key.models }
    }
  }

  readonly receipts = {
    /** Offline, against the gateway's JWKS (fetched once, again on an unknown kid). */
    verify: (headerValueOrEnvelope: unknown): Promise<VerificationResult> => this.#verify(headerValueOrEnvelope),
    /** Online: the gateway's own verify route. */
    verifyOnline: (headerValueOrEnvelope: unknown, o?: RestOptions) =>
      this.#call("verifyReceipt", "POST", "/api/v1/receipts/verify", "none", envelopeOrRaw(headerValueOrEnvelope), o),
    list: (query: { limit?: number; cursor?: string; from?: string; to?: string; model?: string } = {}, o?: RestOptions) =>
      this.#call("listReceipts", "GET", `/api/v1/receipts${queryString(query)}`, "portal", undefined, o),
    get: (jti: string, o?: RestOptions) => this.#call("getReceipt", "GET", `/api/v1/receipts/${encodeURIComponent(jti)}`, "portal", undefined, o),
    countersign: (input: Json, o?: RestOptions) => this.#call("countersignAttestation", "POST", "/api/v1/receipts/countersign", "key", input, o),
    signedTreeHead: (o?: RestOptions) => this.#call("transparencyHead", "GET", "/api/v1/transparency/sth", "none", undefined, o),
    inclusionProof: (jti: string, o?: RestOptions) => this.#call("transparencyProof", "GET", `/api/v1/transparency/proof/${encodeURIComponent(jti)}`, "none", undefined, o),
    /** The proof that the log of `first` leaves (a tree head you kept) is a prefix of the log now (or of `second` leaves). */
    consistencyProof: (first: number, second?: number, o?: RestOptions) =>
      this.#call("transparencyConsistency", "GET", `/api/v1/transparency/consistency${queryString({ first, ...(second === undefined ? {} : { second }) })}`, "none", undefined, o)
  }

  readonly webhooks = {
    endpoints: {
      create: (input: { url: string; events?: Array<string> }, o?: RestOptions) =>
        this.#call("createWebhookEndpoint", "POST", "/api/v1/webhooks/endpoints", "portal", input, o),
      list: (o?: RestOptions) => this.#call("listWebhookEndpoints", "GET", "/api/v1/webhooks/endpoints", "portal", undefined, o),
      get: (id: string | number, o?: RestOptions) => this.#call("getWebhookEndpoint", "GET", `/api/v1/webhooks/endpoints/${id}`, "portal", undefined, o),
      update: (id: string | number, changes: Json, o?: RestOptions) => this.#call("updateWebhookEndpoint", "PATCH", `/api/v1/webhooks/endpoints/${id}`, "portal", changes, o),
      delete: (id: string | number, o?: RestOptions) => this.#call("deleteWebhookEndpoint", "DELETE", `/api/v1/webhooks/endpoints/${id}`, "portal", undefined, o),
      rotateSecret: (id: string | number, o?: RestOptions) => this.#call("rotateWebhookSecret", "POST", `/api/v1/webhooks/endpoints/${id}/rotate`, "portal", {}, o),
      test: (id: string | number, o?: RestOptions) => this.#call("testWebhookEndpoint", "POST", `/api/v1/webhooks/endpoints/${id}/test`, "portal", {}, o),
      resume: (id: string | number, o?: RestOptions) => this.#call("resumeWebhookEndpoint", "POST", `/api/v1/webhooks/endpoints/${id}/resume`, "portal", {}, o)
    },
    deliveries: {
      list: (query: Record<string, string | number> = {}, o?: RestOptions) =>
        this.#call("listWebhookDeliveries", "GET", `/api/v1/webhooks/deliveries${queryString(query)}`, "portal", undefined, o),
      get: (id: string | number, o?: RestOptions) => this.#call("getWebhookDelivery", "GET", `/api/v1/webhooks/deliveries/${id}`, "portal", undefined, o),
      replay: (id: string | number, o?: RestOptions) => this.#call("replayWebhookDelivery", "POST", `/api/v1/webhooks/deliveries/${id}/replay`, "portal", {}, o)
    }
  }

  /** The organisation's own provider keys (bring your own key): stored encrypted, never shown again but for last4. */
  readonly byok = {
    list: (o?: RestOptions) => this.#call("listByokKeys", "GET", "/api/v1/byok", "portal", undefined, o),
    /** Stores or replaces the key for `provider` (a catalogue slug); aws-bedrock also takes an AWS key pair. */
    put: (provider: string, input: ByokCredential, o?: RestOptions) =>
      this.#call("putByokKey", "PUT", `/api/v1/byok/${encodeURIComponent(provider)}`, "portal", input, o),
    delete: (provider: string, o?: RestOptions) => this.#call("deleteByokKey", "DELETE", `/api/v1/byok/${encodeURIComponent(provider)}`, "portal", undefined, o)
  }

  /** The gateway's model catalogue without a key: with `include: "unavailable"`, every model and whether BYOK opens it. */
  readonly catalogue = (query: { include?: "unavailable" } = {}, o?: RestOptions) =>
    this.#call("listModels", "GET", `/api/v1/models${queryString(query)}`, "none", undefined, o)

  readonly billing = {
    balance: (o?: RestOptions) => this.#call("getBalance", "GET", "/api/v1/billing/balance", "portal", undefined, o),
    /** Starts a top-up checkout (Stripe Checkout, or the development payments provider); answers its `checkout_url`. */
    topUp: (input: { amount_usd: string | number }, o?: RestOptions) => this.#call("createTopup", "POST", "/api/v1/billing/topup", "portal", input, o),
    /** Development payments only: completes a checkout as if it had been paid. */
    completeDevCheckout: (checkoutId: string, o?: RestOptions) =>
      this.#call("completeDevCheckout", "POST", `/api/v1/billing/dev/checkouts/${encodeURIComponent(checkoutId)}/complete`, "portal", {}, o),
    redeemLicence: (input: { code: string }, o?: RestOptions) => this.#call("redeemLicence", "POST", "/api/v1/billing/redeem-license", "portal", input, o),
    ledger: (query: Record<string, string | number> = {}, o?: RestOptions) => this.#call("getLedger", "GET", `/api/v1/billing/ledger${queryString(query)}`, "portal", undefined, o),
    usage: (query: Record<string, string | number> = {}, o?: RestOptions) => this.#call("getUsage", "GET", `/api/v1/billing/usage${queryString(query)}`, "portal", undefined, o)
  }

  /** The gateway key's own organisation, read-only, with the gateway key alone: balance, usage, the key's scopes. */
  readonly self = {
    balance: (o?: RestOptions) => this.#call("selfBalance", "GET", "/api/v1/self/balance", "key", undefined, o),
    usage: (query: { from?: string; to?: string } = {}, o?: RestOptions) => this.#call("selfUsage", "GET", `/api/v1/self/usage${queryString(query)}`, "key", undefined, o),
    key: (o?: RestOptions) => this.#call("selfKey", "GET", "/api/v1/self/key", "key", undefined, o)
  }

  /** A free-tier key (shown once). No auth. */
  readonly selfServiceKey = (input: { email?: string; name?: string } = {}, o?: RestOptions) => this.#call("issueSelfServiceKey", "POST", "/api/v1/self-service/key", "none", input, o)
  /** An anonymous demo key: $2, 24 hours, relay only, no receipts (shown once). No auth. */
  readonly demoKey = (o?: RestOptions) => this.#call("issueDemoKey", "POST", "/api/v1/demo/key", "none", {}, o)
}

const queryString = (query: Record<string, unknown>) => {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value))
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}
