import { Schema, SchemaRepresentation } from "effect"
import type { ApiResponse, ApiRoute, RequestHeader, ResponseHeader, RouteAuth } from "./ApiRoute.ts"
import type { CatalogueEntry } from "./errorCatalogue.ts"
import { Countersignature, FailedReceiptV2, ReceiptV2 } from "./receipts.ts"
import { WEBHOOK_DELIVERY_HEADERS, WebhookPayload } from "./webhooks.ts"

type Json = Record<string, unknown>

const REQUEST_HEADERS: Record<RequestHeader | "X-Request-Id" | "traceparent" | "X-CSRF-Token", Json> = {
  "X-Request-Id": { description: "Your id for the call, a UUID v4: answered back and recorded in the receipt. Anything else is replaced by an id the gateway makes.", schema: { type: "string", format: "uuid" } },
  traceparent: { description: "W3C trace context. The gateway continues your trace (upstream too) and answers its own span's `traceparent`.", schema: { type: "string", pattern: "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$" } },
  "Idempotency-Key": { description: "Makes a retry safe (at most 128 characters, a UUID v4 is best): the same key and body within 24 h replays the first 2xx answer with `X-Service-Idempotent-Replay: true`; another body is 409 `idempotency_key_conflict`.", schema: { type: "string", maxLength: 128 } },
  "X-Service-Engine": { description: "`<engine id>/<version>` of the on-device tokeniser, e.g. `relay-ts/0.1.0`.", schema: { type: "string" }, required: true },
  "X-Service-Attestation": { description: "Standard base64 of the JSON v3 attestation the engine signed over this exact body (docs/raw-rest.md, byte-exact vectors in sdks/vectors/).", schema: { type: "string" }, required: true },
  "Stripe-Signature": { description: "Stripe's signature over the raw body.", schema: { type: "string" }, required: true },
  "X-CSRF-Token": { description: "With the portal session cookie, every write echoes the `pr_csrf` cookie here (403 `csrf_failed` otherwise). Not needed with a portal token.", schema: { type: "string" } }
}

const RESPONSE_HEADERS: Record<ResponseHeader | "X-Request-Id" | "traceparent" | "X-Response-Time" | "Server-Timing" | "Retry-After" | "RateLimit" | "RateLimit-Policy", Json> = {
  "X-Request-Id": { description: "The call's id: yours, or one the gateway minted. Quote it to support.", schema: { type: "string" } },
  traceparent: { description: "W3C trace context of the gateway's span (your trace id when you sent one).", schema: { type: "string" } },
  "X-Response-Time": { description: "Milliseconds the gateway spent, e.g. `12ms`.", schema: { type: "string" } },
  "Server-Timing": { description: "W3C Server-Timing: each stage's duration (unless SERVER_TIMING=off).", schema: { type: "string" } },
  "X-Service-Receipt-V2": { description: "Standard padded base64 of the JSON ReceiptV2 (components.schemas.ReceiptV2) of this call.", schema: { type: "string", contentEncoding: "base64", contentMediaType: "application/json", contentSchema: { $ref: "#/components/schemas/ReceiptV2" } } },
  "X-Service-Receipt-V2-JTI": { description: "The receipt's jti; the stored v1 receipt has the same (GET /api/v1/receipts/{jti}).", schema: { type: "string", pattern: "^[0-9a-f]{32}$" } },
  "X-Service-Receipt-V3": { description: "Standard base64 of the JSON Countersignature of your attestation.", schema: { type: "string", contentEncoding: "base64", contentMediaType: "application/json", contentSchema: { $ref: "#/components/schemas/Countersignature" } } },
  "X-Service-Receipt-Failed": { description: "On a refusal after the key was accepted: standard base64 of the JSON FailedReceiptV2.", schema: { type: "string", contentEncoding: "base64", contentMediaType: "application/json", contentSchema: { $ref: "#/components/schemas/FailedReceiptV2" } } },
  "X-Service-Receipt-Kid": { description: "The kid of the key this PEM holds: the current receipt signing key (the first key of the JWKS).", schema: { type: "string" } },
  "X-Service-Idempotent-Replay": { description: "`true` when this answer is the stored answer of an earlier call with the same Idempotency-Key.", schema: { type: "string", enum: ["true"] } },
  "Cache-Control": { description: "`no-store` on answers that carry secrets or private state.", schema: { type: "string" } },
  Location: { description: "Where the answer sends a browser.", schema: { type: "string" } },
  "Set-Cookie": { description: "The portal session (`pr_session`, HttpOnly) and CSRF (`pr_csrf`) cookies.", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "string" } },
  RateLimit: { description: "IETF RateLimit state of the window that refused the call.", schema: { type: "string" } },
  "RateLimit-Policy": { description: "IETF RateLimit-Policy of the relay windows and quotas.", schema: { type: "string" } }
}

const EVERY_RESPONSE_HEADERS = ["X-Request-Id", "traceparent"] as const

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })
const paramRef = (name: string) => ({ $ref: `#/components/parameters/${name}` })

/** Codes a route answers because of how it authenticates. */
const authCodes = (auth: RouteAuth, method: ApiRoute["method"]): ReadonlyArray<string> => {
  switch (auth.kind) {
    case "none":
    case "stripeSignature":
      return []
    case "gatewayKey":
      return ["invalid_key", "key_revoked", "key_expired", ...(auth.demo ? [] : ["demo_key_restricted"]), ...(auth.scope ? ["insufficient_scope"] : [])]
    case "portal":
      return [auth.unauthenticatedCode ?? "portal_auth_required", "insufficient_ability", ...(method === "GET" ? [] : ["csrf_failed"])]
    case "session":
      return ["portal_auth_required", ...(method === "GET" ? [] : ["csrf_failed"])]
  }
}

const security = (auth: RouteAuth): ReadonlyArray<Json> => {
  switch (auth.kind) {
    case "none":
    case "stripeSignature":
      return []
    case "gatewayKey":
      return auth.optional ? [{}, { gatewayKey: [] }] : [{ gatewayKey: [] }]
    case "portal":
      return [{ portalToken: [...auth.abilities] }, { portalSession: [...auth.abilities] }]
    case "session":
      return [{ portalSession: [] }]
  }
}

const authDescription = (auth: RouteAuth): string => {
  switch (auth.kind) {
    case "none":
      return "No authentication."
    case "stripeSignature":
      return "No authentication: Stripe signs the body (`Stripe-Signature`)."
    case "gatewayKey":
      return `${auth.optional ? "Optionally a" : "A"} gateway key (\`Authorization: Bearer svc_...\`)${auth.scope ? ` with the \`${auth.scope}\` scope` : ""}${auth.demo ? "; demo keys allowed" : "; demo keys refused"}. Portal tokens are refused.`
    case "portal":
      return `A portal token (\`Authorization: Bearer spt_...\`) or the portal session cookie${auth.abilities.length === 0 ? "" : `, holding ${auth.abilities.map((a) => `\`${a}\``).join(" or ")}${auth.abilities.includes("ability:admin") ? "" : " (or \`ability:admin\`)"}`}. Gateway keys are refused.`
    case "session":
      return "The portal session cookie of a signed-in person (portal tokens and gateway keys are refused)."
  }
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}")

/**
 * The OpenAPI 3.1 document of the gateway, built from the route registry (whose request schemas the handlers decode
 * with) and the error catalogue. Every Effect Schema becomes JSON Schema 2020-12 through Effect's own converter;
 * objects are closed (`additionalProperties: false`) unless a schema says they are open.
 */
export const openApiDocument = (
  routes: ReadonlyArray<ApiRoute>,
  catalogue: ReadonlyArray<CatalogueEntry>,
  info: { readonly version: string }
): Json => {
  const statusOf = new Map(catalogue.map((e) => [e.code, e.status]))
  const ErrorCode = Schema.Literals(catalogue.map((e) => e.code) as [string, ...Array<string>]).annotate({
    identifier: "ErrorCode",
    description: [
      "Stable error codes with their status and when each is answered (docs/errors.md):",
      "",
      "| status | code | when |",
      "|---|---|---|",
      ...catalogue.map((e) => `| ${e.status} | \`${e.code}\` | ${e.when.replaceAll("|", "\\|")} |`)
    ].join("\n")
  })
  const ErrorEnvelope = Schema.Struct({
    error: Schema.StructWithRest(
      Schema.Struct({
        code: ErrorCode,
        message: Schema.String.annotate({ description: "For people; never echoes request content or secrets." }),
        details: Schema.optionalKey(Schema.StructWithRest(Schema.Struct({ path: Schema.optionalKey(Schema.String) }), [Schema.Record(Schema.String, Schema.Unknown)]))
      }),
      [Schema.Record(Schema.String, Schema.Unknown)]
    )
  }).annotate({ identifier: "Error", description: "The one error envelope of every route: `{ error: { code, message, ... } }`." })

  // Every schema the document mentions, converted together so named ones become shared components.
  // The receipt schemas are named by response headers (contentSchema), so they are components even when no body uses them.
  const schemas: Array<Schema.Top> = []
  const index = new Map<Schema.Top, number>()
  const add = (s: Schema.Top | undefined) => {
    if (s !== undefined && !index.has(s)) {
      index.set(s, schemas.length)
      schemas.push(s)
    }
  }
  for (const s of [ErrorEnvelope, WebhookPayload, ReceiptV2, FailedReceiptV2, Countersignature]) add(s)
  for (const r of routes) {
    add(r.requestBody)
    add(r.rawRequestBody?.schema)
    for (const q of r.query ?? []) add(q.schema)
    for (const res of r.responses) {
      add(res.body)
      add(res.content?.schema)
      add(res.stream?.trailer)
    }
  }
  const compiled = SchemaRepresentation.toJsonSchemaMultiDocument(
    SchemaRepresentation.toRepresentations(schemas.map((s) => s.ast) as [any, ...Array<any>]),
    { onExcessProperty: "error" }
  )
  const relink = <A>(value: A): A => JSON.parse(JSON.stringify(value).replaceAll("\"#/$defs/", "\"#/components/schemas/"))
  const jsonSchema = (s: Schema.Top): Json => relink(compiled.schemas[index.get(s)!] as Json)

  // Every answer, errors included, carries X-Request-Id, traceparent and X-Response-Time (info.description says so);
  // error answers list only the headers particular to them, to keep the document small.
  const errorResponse = (status: number, codes: ReadonlyArray<string>): Json => {
    const headers = [
      ...(status === 429 || codes.includes("idempotency_in_flight") ? ["Retry-After"] : []),
      ...(status === 429 ? ["RateLimit", "RateLimit-Policy"] : [])
    ]
    return {
      description: codes.map((c) => `\`${c}\``).join(", "),
      ...(headers.length === 0 ? {} : { headers: Object.fromEntries(headers.map((h) => [h, headerRef(h)])) }),
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } }
    }
  }

  const successResponse = (res: ApiResponse): Json => {
    const content: Json = {}
    if (res.body !== undefined) content["application/json"] = { schema: jsonSchema(res.body) }
    if (res.content !== undefined) content[res.content.mediaType] = { schema: jsonSchema(res.content.schema) }
    if (res.stream !== undefined) {
      content["text/event-stream"] = {
        schema: { type: "string", description: res.stream.description },
        "x-sse-trailer": { event: res.stream.trailerEvent, data: jsonSchema(res.stream.trailer) }
      }
    }
    return {
      description: res.description,
      headers: Object.fromEntries([...EVERY_RESPONSE_HEADERS, ...(res.headers ?? [])].map((h) => [h, headerRef(h)])),
      ...(Object.keys(content).length === 0 ? {} : { content })
    }
  }

  const operation = (r: ApiRoute): Json => {
    const hasBody = r.requestBody !== undefined || r.rawRequestBody !== undefined
    const codes = [...new Set([
      ...authCodes(r.auth, r.method),
      ...(hasBody ? ["invalid_request", "payload_too_large"] : []),
      ...((r.query ?? []).length > 0 ? ["invalid_request"] : []),
      ...((r.requestHeaders ?? []).includes("Idempotency-Key") ? ["invalid_idempotency_key", "idempotency_key_conflict", "idempotency_in_flight"] : []),
      ...(r.errors ?? []),
      "internal_error"
    ])]
    for (const code of codes) {
      if (!statusOf.has(code)) throw new Error(`${r.method} ${r.path} names error code "${code}", which docs/errors.md does not list`)
    }
    const byStatus = new Map<number, Array<string>>()
    for (const code of codes) byStatus.set(statusOf.get(code)!, [...(byStatus.get(statusOf.get(code)!) ?? []), code])
    const responses: Json = {}
    for (const res of r.responses) responses[String(res.status)] = successResponse(res)
    for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
      const error = errorResponse(status, statusCodes)
      const existing = responses[String(status)] as Json | undefined
      if (existing === undefined) {
        responses[String(status)] = error
        continue
      }
      // A status that is both an answer and an error (a failed verification is 422 too): either body.
      const answer = (existing.content as Json)["application/json"] as Json
      responses[String(status)] = {
        ...existing,
        description: `${existing.description as string}\n\nOr an error:\n\n${error.description as string}`,
        content: { "application/json": { schema: { oneOf: [answer.schema, { $ref: "#/components/schemas/Error" }] } } }
      }
    }
    const headerParams = [
      "X-Request-Id",
      "traceparent",
      ...(r.requestHeaders ?? []),
      ...((r.auth.kind === "portal" || r.auth.kind === "session") && r.method !== "GET" ? ["X-CSRF-Token"] : [])
    ]
    const parameters = [
      ...Object.entries(r.pathParameters ?? {}).map(([name, description]) => ({ name, in: "path", required: true, description, schema: { type: "string" } })),
      ...(r.query ?? []).map((q) => ({ name: q.name, in: "query", required: q.required === true, description: q.description, schema: jsonSchema(q.schema) })),
      ...headerParams.map(paramRef)
    ]
    const requestBody = r.requestBody !== undefined
      ? { required: true, content: { "application/json": { schema: jsonSchema(r.requestBody) } } }
      : r.rawRequestBody !== undefined
      ? { required: true, description: r.rawRequestBody.description, content: { [r.rawRequestBody.mediaType]: { schema: jsonSchema(r.rawRequestBody.schema) } } }
      : undefined
    return {
      operationId: r.operationId,
      tags: [r.tag],
      summary: r.summary,
      description: [r.description, `**Auth:** ${authDescription(r.auth)}`, r.deprecated].filter((s) => s !== undefined).join("\n\n"),
      ...(r.deprecated !== undefined ? { deprecated: true } : {}),
      security: security(r.auth),
      parameters,
      ...(requestBody === undefined ? {} : { requestBody }),
      responses,
      "x-error-codes": codes
    }
  }

  const paths: Record<string, Json> = {}
  for (const r of routes) {
    const path = toOpenApiPath(r.path)
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: operation(r) }
  }

  const definitions = relink(compiled.definitions) as Record<string, Json>
  return {
    openapi: "3.1.1",
    info: {
      title: "Privacy Relay gateway",
      version: info.version,
      description: [
        "A content-blind LLM gateway: callers tokenise personal data on their device, sign an attestation of the exact",
        "body, and the gateway relays it unchanged, meters it and returns signed receipts. Raw-REST walk-through:",
        "docs/raw-rest.md. Errors: one envelope (`components.schemas.Error`) with a stable `code` (docs/errors.md).",
        "Every response, errors included, carries `X-Request-Id`, `traceparent`, `X-Response-Time` and (unless",
        "SERVER_TIMING=off) `Server-Timing`; every request may send `X-Request-Id` and `traceparent`."
      ].join(" ")
    },
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    servers: [{ url: "/", description: "This gateway" }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    webhooks: {
      delivery: {
        post: {
          summary: "An event delivered to your webhook endpoint",
          description: "POSTed with the JCS-encoded payload; answer 2xx within 10 s. Verify `X-Service-Signature` over the raw body before trusting it (docs/webhooks.md).",
          parameters: WEBHOOK_DELIVERY_HEADERS.map((h) => ({ name: h.name, in: "header", required: true, description: h.description, schema: { type: "string" } })),
          requestBody: { required: true, content: { "application/json": { schema: jsonSchema(WebhookPayload) } } },
          responses: { "2XX": { description: "Delivered. Anything else (or no answer) is retried with backoff." } }
        }
      }
    },
    components: {
      schemas: definitions,
      parameters: Object.fromEntries(Object.entries(REQUEST_HEADERS).map(([name, p]) => [name, { name, in: "header", required: false, ...p }])),
      headers: RESPONSE_HEADERS,
      securitySchemes: {
        gatewayKey: { type: "http", scheme: "bearer", description: "A gateway key, `svc_...` (self-service, portal or operator issued)." },
        portalToken: { type: "http", scheme: "bearer", description: "A portal token, `spt_...`, holding abilities (the security requirement's list: any one of them, or `ability:admin`)." },
        portalSession: { type: "apiKey", in: "cookie", name: "pr_session", description: "The portal session cookie from POST /api/v1/portal/login; writes also send `X-CSRF-Token`." }
      },
      "x-error-catalogue": catalogue.map((e) => ({ code: e.code, status: e.status, when: e.when }))
    }
  }
}
