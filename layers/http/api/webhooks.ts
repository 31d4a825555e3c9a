import { Schema } from "effect"
import { EVENT_CATALOGUE } from "../../../src/webhooks/events.ts"
import { route } from "./ApiRoute.ts"

const manage = { kind: "portal", abilities: ["webhooks.manage"] } as const
const read = { kind: "portal", abilities: ["webhooks.read", "webhooks.manage"] } as const
const noStore = ["Cache-Control"] as const

const Events = Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(64)).annotate({
  description: `Event names of the catalogue, "*" or "<namespace>.*". The catalogue: ${EVENT_CATALOGUE.join(", ")}.`
})
const Url = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({ description: "An https URL the SSRF guard admits." })

const EndpointCreate = Schema.Struct({ url: Url, events: Events })
const EndpointUpdate = Schema.Struct({ url: Schema.optionalKey(Url), events: Schema.optionalKey(Events) })

const endpointFields = {
  id: Schema.Int,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  status: Schema.Literals(["active", "paused"]),
  paused_reason: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}
const Endpoint = Schema.Struct(endpointFields).annotate({ identifier: "WebhookEndpoint" })
const EndpointWithSecret = Schema.Struct({
  ...endpointFields,
  secret: Schema.String.annotate({ description: "The signing secret, shown on creation and rotation only." })
}).annotate({ identifier: "WebhookEndpointWithSecret" })

const deliveryFields = {
  id: Schema.Int,
  endpoint_id: Schema.Int,
  event: Schema.String,
  event_id: Schema.String,
  status: Schema.Literals(["pending", "retrying", "delivered", "dead"]),
  attempt_count: Schema.Int,
  last_http_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.String),
  replay_of: Schema.NullOr(Schema.Int),
  created_at: Schema.String,
  updated_at: Schema.String,
  completed_at: Schema.NullOr(Schema.String)
}
const Delivery = Schema.Struct(deliveryFields).annotate({ identifier: "WebhookDelivery" })

/** The body the gateway POSTs to an endpoint (JCS-encoded). */
export const WebhookPayload = Schema.Struct({
  event: Schema.Literals(EVENT_CATALOGUE),
  event_id: Schema.String,
  timestamp: Schema.Int.annotate({ description: "Unix seconds; equals X-Service-Webhook-Timestamp." }),
  data: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "WebhookPayload" })

const DeliveryDetail = Schema.Struct({
  ...deliveryFields,
  payload: WebhookPayload,
  attempts: Schema.Array(Schema.Struct({
    id: Schema.Int,
    attempt: Schema.Int,
    http_code: Schema.NullOr(Schema.Int),
    error: Schema.NullOr(Schema.String),
    started_at: Schema.String,
    finished_at: Schema.NullOr(Schema.String),
    duration_ms: Schema.NullOr(Schema.Number)
  }))
})

/** The headers of every webhook delivery, with what a receiver checks. */
export const WEBHOOK_DELIVERY_HEADERS: ReadonlyArray<{ readonly name: string; readonly description: string }> = [
  { name: "X-Service-Signature", description: "`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with the endpoint secret over `<t>.<raw body>` (docs/webhooks.md)." },
  { name: "X-Service-Webhook-Signature", description: "`sha256=<hex>`: the older v0 scheme over the canonical JSON." },
  { name: "X-Service-Webhook-Signature-Alg", description: "`HMAC-SHA256`." },
  { name: "X-Service-Webhook-Timestamp", description: "Unix seconds; equals the payload's `timestamp`." },
  { name: "X-Service-Webhook-Event", description: "The event name." },
  { name: "X-Service-Webhook-Event-Id", description: "The event id (stable across retries and replays)." },
  { name: "X-Service-Webhook-Delivery-Id", description: "The delivery id (a replay is a new delivery)." },
  { name: "X-Service-Webhook-Attempt", description: "1 for the first attempt." },
  { name: "Idempotency-Key", description: "The event id: deduplicate on it." }
]

const id = { id: "The numeric id." }

export const webhookRoutes = [
  route({
    method: "POST", path: "/api/v1/webhooks/endpoints", operationId: "createWebhookEndpoint", tag: "Webhooks", summary: "Register an endpoint",
    auth: manage, requestBody: EndpointCreate,
    responses: [{ status: 201, description: "Created, with its secret (shown once).", body: EndpointWithSecret, headers: noStore }],
    errors: ["url_not_allowed"]
  }),
  route({
    method: "GET", path: "/api/v1/webhooks/endpoints", operationId: "listWebhookEndpoints", tag: "Webhooks", summary: "List endpoints",
    auth: read, responses: [{ status: 200, description: "The endpoints.", body: Schema.Struct({ endpoints: Schema.Array(Endpoint) }), headers: noStore }]
  }),
  route({
    method: "GET", path: "/api/v1/webhooks/endpoints/:id", operationId: "getWebhookEndpoint", tag: "Webhooks", summary: "One endpoint",
    auth: read, pathParameters: id, responses: [{ status: 200, description: "The endpoint.", body: Endpoint, headers: noStore }], errors: ["not_found"]
  }),
  route({
    method: "PATCH", path: "/api/v1/webhooks/endpoints/:id", operationId: "updateWebhookEndpoint", tag: "Webhooks", summary: "Change an endpoint's URL or events",
    auth: manage, pathParameters: id, requestBody: EndpointUpdate,
    responses: [{ status: 200, description: "The endpoint after the change.", body: Endpoint, headers: noStore }], errors: ["not_found", "url_not_allowed"]
  }),
  route({
    method: "DELETE", path: "/api/v1/webhooks/endpoints/:id", operationId: "deleteWebhookEndpoint", tag: "Webhooks", summary: "Delete an endpoint",
    auth: manage, pathParameters: id, responses: [{ status: 204, description: "Deleted." }], errors: ["not_found"]
  }),
  route({
    method: "POST", path: "/api/v1/webhooks/endpoints/:id/rotate", operationId: "rotateWebhookSecret", tag: "Webhooks", summary: "Rotate an endpoint's signing secret",
    auth: manage, pathParameters: id, responses: [{ status: 200, description: "The endpoint with its new secret.", body: EndpointWithSecret, headers: noStore }], errors: ["not_found"]
  }),
  route({
    method: "POST", path: "/api/v1/webhooks/endpoints/:id/resume", operationId: "resumeWebhookEndpoint", tag: "Webhooks", summary: "Resume a paused endpoint",
    auth: manage, pathParameters: id, responses: [{ status: 200, description: "The endpoint.", body: Endpoint, headers: noStore }], errors: ["not_found"]
  }),
  route({
    method: "POST", path: "/api/v1/webhooks/endpoints/:id/test", operationId: "testWebhookEndpoint", tag: "Webhooks", summary: "Send a `webhook.test` event",
    auth: manage, pathParameters: id, responses: [{ status: 202, description: "Queued.", body: Delivery, headers: noStore }], errors: ["not_found"]
  }),
  route({
    method: "GET", path: "/api/v1/webhooks/deliveries", operationId: "listWebhookDeliveries", tag: "Webhooks", summary: "The delivery log, newest first",
    auth: read,
    query: [
      { name: "limit", description: "Page size (default 50, at most 200).", schema: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) },
      { name: "before", description: "Deliveries with a smaller id.", schema: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) },
      { name: "endpoint_id", description: "Only this endpoint's.", schema: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) },
      { name: "status", description: "Only deliveries in this state.", schema: Schema.Literals(["pending", "retrying", "delivered", "dead"]) }
    ],
    responses: [{ status: 200, description: "The deliveries.", body: Schema.Struct({ deliveries: Schema.Array(Delivery) }), headers: noStore }]
  }),
  route({
    method: "GET", path: "/api/v1/webhooks/deliveries/:id", operationId: "getWebhookDelivery", tag: "Webhooks", summary: "One delivery with its payload and attempts",
    auth: read, pathParameters: id, responses: [{ status: 200, description: "The delivery.", body: DeliveryDetail, headers: noStore }], errors: ["not_found"]
  }),
  route({
    method: "POST", path: "/api/v1/webhooks/deliveries/:id/replay", operationId: "replayWebhookDelivery", tag: "Webhooks", summary: "Deliver an event again (a new delivery)",
    auth: manage, pathParameters: id, responses: [{ status: 201, description: "The new delivery.", body: Delivery, headers: noStore }], errors: ["not_found"]
  })
]
