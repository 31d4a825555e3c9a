import { Schema } from "effect"
import { SCOPES } from "../../../src/keys/scopes.ts"
import { type ApiResponse, route } from "./ApiRoute.ts"
import { openObject } from "./common.ts"
import { ReceiptV2 } from "./receipts.ts"

const ChatRequest = openObject({
  model: Schema.String,
  messages: Schema.Array(Schema.Unknown),
  stream: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ChatCompletionRequest", description: "OpenAI's chat completion request, already tokenised on the device." })

const MessagesRequest = openObject({
  model: Schema.String,
  max_tokens: Schema.Int,
  messages: Schema.Array(Schema.Unknown),
  stream: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "MessagesRequest", description: "Anthropic's Messages request, already tokenised on the device." })

const ResponsesRequest = openObject({
  model: Schema.String,
  input: Schema.Union([Schema.String, Schema.Array(Schema.Unknown)]),
  instructions: Schema.optionalKey(Schema.NullOr(Schema.String)),
  max_output_tokens: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  tools: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  stream: Schema.optionalKey(Schema.Boolean)
}).annotate({
  identifier: "ResponsesRequest",
  description: [
    "OpenAI's Responses API request, already tokenised on the device. `input`: a string, or items (`message` with",
    "text/image/file parts, `function_call`, `function_call_output`, `reasoning`, `item_reference`). OpenAI's hosted",
    "tools (web search, file search, computer use, ...) only for a model whose provider runs them (else 400",
    "`tool_not_supported`). A model of a provider without the Responses API is served through chat completions",
    "(docs/relay.md, Responses API)."
  ].join(" ")
})

const CountTokensRequest = openObject({
  model: Schema.String,
  messages: Schema.Array(Schema.Unknown)
}).annotate({ identifier: "CountTokensRequest", description: "Anthropic's token counting request (a Messages body without `max_tokens`), already tokenised on the device." })

const TokenCount = openObject({
  input_tokens: Schema.Int
}).annotate({
  identifier: "TokenCount",
  description: "Anthropic's answer: the tokens of the request's messages, system prompt and tools. `X-Service-Token-Count` says whether the provider counted (`provider`) or the gateway estimated (`estimated`: ceil(body bytes / 4))."
})

const EmbeddingsRequest = openObject({
  model: Schema.String,
  input: Schema.Unknown
}).annotate({ identifier: "EmbeddingsRequest", description: "OpenAI's embeddings request, already tokenised on the device." })

const ProviderResponse = openObject({}).annotate({
  identifier: "ProviderResponse",
  description: "The provider's response body, byte for byte (its hash is the receipt's hash_upstream_response)."
})

const SSE_DESCRIPTION = [
  "With `\"stream\": true`: `text/event-stream`. The provider's frames as they arrive (`data: <chunk>` ... `data: [DONE]`,",
  "Anthropic's event sequence, or the Responses API's named events ending with `response.completed`), then the",
  "trailer: one `event: receipt-v2` frame whose `data:` is the ReceiptV2 envelope as JSON. A stream the provider cuts",
  "off (no `[DONE]`, `message_stop` or `response.completed`) ends without the trailer."
].join(" ")

const relayResponses = (streams: boolean): ReadonlyArray<ApiResponse> => [
  {
    status: 200,
    description: streams ? `The provider's answer with the receipt headers. ${SSE_DESCRIPTION}` : "The provider's answer with the receipt headers.",
    body: ProviderResponse,
    headers: ["X-Service-Receipt-V2", "X-Service-Receipt-V2-JTI", "X-Service-Receipt-V3", "X-Service-Idempotent-Replay"],
    ...(streams ? { stream: { description: SSE_DESCRIPTION, trailerEvent: "receipt-v2", trailer: ReceiptV2 } } : {})
  }
]

const RELAY_ERRORS = [
  "invalid_request",
  "payload_too_large",
  "engine_untrusted",
  "pretokenised_required",
  "egress_policy_violation",
  "model_not_found",
  "model_not_allowed",
  "provider_not_configured",
  "insufficient_balance",
  "rate_limited",
  "quota_exceeded",
  "invalid_idempotency_key",
  "idempotency_key_conflict",
  "idempotency_in_flight",
  "upstream_error",
  "upstream_timeout"
]

const RELAY_DESCRIPTION = [
  "The body must be the exact bytes the on-device engine attested: `X-Service-Engine: <engine>/<version>` and",
  "`X-Service-Attestation` (standard base64 of the signed v3 attestation whose `egress_sha256` is the SHA-256 of the",
  "JCS form of this body). The gateway forwards the body unchanged. Every refusal after the key was accepted",
  "carries `X-Service-Receipt-Failed`."
].join(" ")

const relayRoute = (path: string, operationId: string, summary: string, scope: (typeof SCOPES)[number], body: Schema.Top, streams: boolean) =>
  route({
    method: "POST", path, operationId, tag: "Relay", summary, description: RELAY_DESCRIPTION,
    auth: { kind: "gatewayKey", scope, demo: true },
    requestHeaders: ["X-Service-Engine", "X-Service-Attestation", "Idempotency-Key"],
    rawRequestBody: { mediaType: "application/json", schema: body, description: "Forwarded to the provider unchanged." },
    responses: relayResponses(streams),
    errors: RELAY_ERRORS
  })

export const STREAMING_PATHS: ReadonlyArray<string> = ["/api/v1/chat/completions", "/api/v1/messages", "/api/v1/responses"]

export const relayRoutes = [
  relayRoute("/api/v1/chat/completions", "createChatCompletion", "Relay an OpenAI-style chat completion", "completions", ChatRequest, true),
  relayRoute("/api/v1/messages", "createMessage", "Relay an Anthropic-style message", "messages", MessagesRequest, true),
  relayRoute("/api/v1/embeddings", "createEmbedding", "Relay an embeddings call", "completions", EmbeddingsRequest, false),
  route({
    ...relayRoute("/api/v1/responses", "createResponse", "Relay an OpenAI Responses API call", "completions", ResponsesRequest, true),
    errors: [...RELAY_ERRORS, "tool_not_supported"]
  }),
  route({
    method: "POST",
    path: "/api/v1/messages/count_tokens",
    operationId: "countMessageTokens",
    tag: "Relay",
    summary: "Count the tokens of an Anthropic-style message",
    description: [
      "Attested like the relay routes (attested route `messages.count_tokens`), then counted by the provider (Anthropic's",
      "`/v1/messages/count_tokens`, the body forwarded unchanged) or, for a provider without token counting, estimated.",
      "Not billed, not metered, and without receipts of any kind (failed-call receipts included): nothing is generated."
    ].join(" "),
    auth: { kind: "gatewayKey", scope: "messages", demo: true },
    requestHeaders: ["X-Service-Engine", "X-Service-Attestation"],
    rawRequestBody: { mediaType: "application/json", schema: CountTokensRequest, description: "Forwarded to the provider unchanged." },
    responses: [{ status: 200, description: "The token count.", body: TokenCount }],
    errors: [
      "engine_untrusted",
      "pretokenised_required",
      "model_not_found",
      "model_not_allowed",
      "provider_not_configured",
      "insufficient_balance",
      "rate_limited",
      "quota_exceeded",
      "upstream_error",
      "upstream_timeout"
    ]
  })
]
