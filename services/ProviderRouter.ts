import { Context, Data, type Effect } from "effect"
import type { ModelLookup } from "../src/providers/catalogue.ts"
import type { Capability, ModelEntry, ProviderEntry, UpstreamEndpoint } from "../src/providers/provider.ts"
import type { RoutingDecision } from "../src/routing/costRouter.ts"
import type { GatewayPrincipal } from "./Keys.ts"

/** Where one relay call goes, with the credentials to use. Credentials never leave the gateway. */
export interface RouteTarget {
  readonly provider: ProviderEntry
  readonly model: ModelEntry
  readonly endpoint: UpstreamEndpoint
  readonly url: string
  /** The URL of a streamed call: `url` unless the endpoint streams elsewhere (Gemini's `streamGenerateContent`). */
  readonly streamUrl: string
  readonly authHeaders: Readonly<Record<string, string>>
  /**
   * For a provider whose requests are signed (Amazon Bedrock with an AWS key pair): the headers to add to one request,
   * computed from its URL, the headers about to be sent and the exact body, right before it goes out.
   */
  readonly sign?: (request: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array }) => Promise<Record<string, string>>
  readonly keyMode: "pooled" | "byok"
  /**
   * Set when the provider has several pooled keys (docs/providers.md): which one this target carries (0-based), and
   * one target per key in slot order, the relay choosing among them per call. Never the key itself.
   */
  readonly keySlot?: { readonly index: number; readonly count: number }
  readonly keyTargets?: ReadonlyArray<RouteTarget>
  readonly timeoutMs: number
  /** Set when the content-blind router ran (docs/routing.md): sealed into the receipts, echoed as a header. */
  readonly routingDecision?: RoutingDecision
}

/** Metadata the router may use (never the body's content); absent = routing off. */
export interface RoutingRequest {
  /** The raw `X-Service-Routing` header. */
  readonly header: string | undefined
  readonly bodyBytes: number
  readonly maxOutputTokens: number | undefined
}

/** The requested model is not in the catalogue (`inCatalogue: false`), or is but does not serve the route asked. */
export class ModelNotFound extends Data.TaggedError("ModelNotFound")<{ readonly modelId: string; readonly inCatalogue: boolean }> {}

/** The key's model allowlist does not admit the requested model. */
export class ModelNotAllowed extends Data.TaggedError("ModelNotAllowed")<{ readonly modelId: string; readonly allowed: ReadonlyArray<string> }> {}

/** The routing header asks for a strategy the router does not have (`strategy` as sent). */
export class UnknownRoutingStrategy extends Data.TaggedError("UnknownRoutingStrategy")<{ readonly strategy: string }> {}

/**
 * The model's provider cannot be called for this organisation: the gateway has no pooled key or base URL for it and
 * the organisation stored no own key. Retrying cannot help (the HTTP layer answers 400, which the SDKs do not retry).
 */
export class ProviderNotConfigured extends Data.TaggedError("ProviderNotConfigured")<{ readonly provider: string }> {}

/**
 * Resolves a requested model for a principal: `ModelNotFound` (not in the catalogue or not on this route),
 * `ModelNotAllowed` (outside the key's allowlist), `ProviderNotConfigured` (no pooled key and no BYOK credential, or
 * no base URL). The organisation's own BYOK credential for the provider wins over the pooled key.
 * With `routing` asking for a strategy (`UnknownRoutingStrategy` for an unknown one), the call may move to a cheaper
 * provider serving the same model id.
 */
export class ProviderRouter extends Context.Service<ProviderRouter, {
  readonly resolve: (input: { readonly modelId: string; readonly capability: Capability; readonly principal: GatewayPrincipal; readonly routing?: RoutingRequest }) =>
    Effect.Effect<RouteTarget, ModelNotFound | ModelNotAllowed | UnknownRoutingStrategy | ProviderNotConfigured>
  /**
   * Which catalogue models a key could call now (the model list): the provider has a base URL and a key (the
   * organisation's BYOK key or the gateway's pooled key), and the key's model allowlist admits the model.
   * Without a principal: what any key of an organisation without BYOK keys could call.
   */
  readonly callable: (principal: GatewayPrincipal | undefined) => Effect.Effect<(lookup: ModelLookup) => boolean>
}>()("privacy-relay/ProviderRouter") {}
