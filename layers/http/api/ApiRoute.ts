import type { Schema } from "effect"
import type { Scope } from "../../../src/keys/scopes.ts"

/** Who may call a route. */
export type RouteAuth =
  | { readonly kind: "none" }
  /** A gateway key (`svc_...`) with `scope` when given; `demo` when demo keys are let in; `optional` when the route also answers without one. */
  | { readonly kind: "gatewayKey"; readonly scope?: Scope; readonly demo?: boolean; readonly optional?: boolean }
  /** A portal token (`spt_...`) or the portal session cookie, holding one of `abilities` (any ability when empty). */
  | { readonly kind: "portal"; readonly abilities: ReadonlyArray<string>; readonly unauthenticatedCode?: "auth_required" }
  /** The portal session cookie of a signed-in person; portal tokens are not enough. */
  | { readonly kind: "session" }
  /** Public, authenticated by the `Stripe-Signature` header over the raw body. */
  | { readonly kind: "stripeSignature" }

/** Request headers a route reads beyond the ones every route accepts (`X-Request-Id`, `traceparent`). */
export type RequestHeader = "Idempotency-Key" | "X-Service-Engine" | "X-Service-Attestation" | "Stripe-Signature"

/** Response headers a route may set beyond the ones every response carries (`X-Request-Id`, `traceparent`, `X-Response-Time`). */
export type ResponseHeader =
  | "X-Service-Receipt-V2"
  | "X-Service-Receipt-V2-JTI"
  | "X-Service-Receipt-V3"
  | "X-Service-Receipt-Failed"
  | "X-Service-Receipt-Kid"
  | "X-Service-Idempotent-Replay"
  | "Cache-Control"
  | "Set-Cookie"
  | "Location"

export interface QueryParameter {
  readonly name: string
  readonly description: string
  readonly schema: Schema.Top
  readonly required?: boolean
}

export interface ApiResponse {
  readonly status: number
  readonly description: string
  /** JSON body; absent for an empty body (204) or a non-JSON body (`content`). */
  readonly body?: Schema.Top
  /** A non-JSON body: its media type and the schema of the text. */
  readonly content?: { readonly mediaType: string; readonly schema: Schema.Top }
  readonly headers?: ReadonlyArray<ResponseHeader>
  /** The same status also answers `text/event-stream` (a request with `"stream": true`), ending with a trailer event. */
  readonly stream?: { readonly description: string; readonly trailerEvent: string; readonly trailer: Schema.Top }
}

/**
 * One route of the gateway as the OpenAPI document describes it. The handler of a route with `requestBody` decodes
 * its body with that same schema (layers/http/body.ts `readDocumentedBody`), so the document cannot promise a
 * shape the handler does not enforce.
 */
export interface ApiRoute {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** The router's path syntax: `/api/keys/:id`. */
  readonly path: string
  readonly operationId: string
  readonly tag: string
  readonly summary: string
  readonly description?: string
  readonly auth: RouteAuth
  readonly pathParameters?: Readonly<Record<string, string>>
  readonly query?: ReadonlyArray<QueryParameter>
  readonly requestHeaders?: ReadonlyArray<RequestHeader>
  readonly requestBody?: Schema.Top
  /** A request body the handler reads as bytes (relay bodies are forwarded unchanged): described, not decoded. */
  readonly rawRequestBody?: { readonly mediaType: string; readonly schema: Schema.Top; readonly description: string }
  readonly responses: ReadonlyArray<ApiResponse>
  /** Error codes (docs/errors.md) the route answers besides the ones its auth and body imply. */
  readonly errors?: ReadonlyArray<string>
  readonly deprecated?: string
}

export const route = (r: ApiRoute): ApiRoute => r
