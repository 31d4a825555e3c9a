import { Context, Data, type Effect } from "effect"

/** A webhook endpoint as the management API shows it (never with its secret, except at creation and rotation). */
export interface WebhookEndpointView {
  readonly id: number
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly status: "active" | "paused"
  readonly paused_reason: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface WebhookDeliveryView {
  readonly id: number
  readonly endpoint_id: number
  readonly event: string
  readonly event_id: string
  readonly status: "pending" | "retrying" | "delivered" | "dead"
  readonly attempt_count: number
  readonly last_http_code: number | null
  readonly last_error: string | null
  readonly next_attempt_at: string | null
  readonly replay_of: number | null
  readonly created_at: string
  readonly updated_at: string
  readonly completed_at: string | null
}

export interface WebhookAttemptView {
  /** The X-Service-Webhook-Delivery-Id this attempt carried. */
  readonly id: number
  readonly attempt: number
  readonly http_code: number | null
  readonly error: string | null
  readonly started_at: string
  readonly finished_at: string | null
  readonly duration_ms: number | null
}

export interface WebhookDeliveryDetail extends WebhookDeliveryView {
  /** The event as delivered; each attempt sends it with `timestamp` set to the attempt's signing time. */
  readonly payload: { readonly event: string; readonly event_id: string; readonly timestamp: number; readonly data: unknown }
  readonly attempts: ReadonlyArray<WebhookAttemptView>
}

export interface DeliveryListQuery {
  readonly limit: number
  /** Only ids below this one (paging backwards through the log). */
  readonly before?: number
  readonly endpointId?: number
  readonly status?: string
}

/** No webhook endpoint with this id in the organisation (another organisation's answers alike). */
export class WebhookEndpointNotFound extends Data.TaggedError("WebhookEndpointNotFound")<{}> {}

/** No webhook delivery with this id in the organisation (another organisation's answers alike). */
export class WebhookDeliveryNotFound extends Data.TaggedError("WebhookDeliveryNotFound")<{}> {}

/**
 * Webhook management for one organisation at a time: every operation takes the caller's organisation and
 * answers 404 `not_found` for ids of other organisations, exactly as for ids that do not exist.
 * Inputs are already validated (URL checked by the SSRF guard, events against the catalogue).
 */
export class Webhooks extends Context.Service<Webhooks, {
  readonly createEndpoint: (orgId: string, input: { readonly url: string; readonly events: ReadonlyArray<string> }) =>
    Effect.Effect<{ readonly endpoint: WebhookEndpointView; readonly secret: string }>
  readonly listEndpoints: (orgId: string) => Effect.Effect<ReadonlyArray<WebhookEndpointView>>
  readonly getEndpoint: (orgId: string, id: number) => Effect.Effect<WebhookEndpointView, WebhookEndpointNotFound>
  readonly updateEndpoint: (
    orgId: string,
    id: number,
    input: { readonly url?: string; readonly events?: ReadonlyArray<string> }
  ) => Effect.Effect<WebhookEndpointView, WebhookEndpointNotFound>
  readonly deleteEndpoint: (orgId: string, id: number) => Effect.Effect<void, WebhookEndpointNotFound>
  /** A new secret; the old one is never used again from the moment this commits. */
  readonly rotateSecret: (orgId: string, id: number) =>
    Effect.Effect<{ readonly endpoint: WebhookEndpointView; readonly secret: string }, WebhookEndpointNotFound>
  readonly resumeEndpoint: (orgId: string, id: number) => Effect.Effect<WebhookEndpointView, WebhookEndpointNotFound>
  /** Queues a synthetic `webhook.test` delivery for this endpoint only (event_id `test-<uuid>`). */
  readonly sendTest: (orgId: string, id: number) => Effect.Effect<WebhookDeliveryView, WebhookEndpointNotFound>
  readonly listDeliveries: (orgId: string, query: DeliveryListQuery) => Effect.Effect<ReadonlyArray<WebhookDeliveryView>>
  readonly getDelivery: (orgId: string, id: number) => Effect.Effect<WebhookDeliveryDetail, WebhookDeliveryNotFound>
  /** A new delivery row with the same event and data, event_id `replay-<uuid>`; the original row is kept. */
  readonly replayDelivery: (orgId: string, id: number) => Effect.Effect<WebhookDeliveryView, WebhookDeliveryNotFound | WebhookEndpointNotFound>
}>()("privacy-relay/Webhooks") {}
