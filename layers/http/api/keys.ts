import { Schema } from "effect"
import { SCOPES } from "../../../src/keys/scopes.ts"
import { route } from "./ApiRoute.ts"
import { Instant, Micros, optionalText, Usage, Usd, pageQuery } from "./common.ts"

const MAX_LIST = 64

const Scope = Schema.Literals(SCOPES)
const nullableList = <S extends Schema.Top>(item: S) => Schema.optionalKey(Schema.NullOr(Schema.Array(item).check(Schema.isMaxLength(MAX_LIST))))

const editableFields = {
  name: optionalText(100, "A label for people."),
  permissions: nullableList(Scope).annotate({ description: "Scopes; empty or null means every scope." }),
  models: nullableList(Schema.String).annotate({ description: "Model allowlist (catalogue ids); null means every model." }),
  rotation_days: Schema.optionalKey(Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3650 }))))
}

export const KeyCreateRequest = Schema.Struct({
  ...editableFields,
  org_id: optionalText(100, "A sub-organisation of the caller's organisation to create the key in.")
}).annotate({ identifier: "KeyCreateRequest" })

export const KeyUpdateRequest = Schema.Struct(editableFields).annotate({ identifier: "KeyUpdateRequest" })

export const Key = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  key_prefix: Schema.String,
  name: Schema.NullOr(Schema.String),
  tier: Schema.String,
  permissions: Schema.Array(Schema.String),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  status: Schema.Literals(["active", "revoked", "rotated"]),
  rotation_days: Schema.NullOr(Schema.Int),
  rotation_due: Schema.Boolean,
  rotation_due_at: Schema.NullOr(Schema.String),
  replaced_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Key" })

export const MintedKey = Schema.Struct({
  id: Schema.String,
  api_key: Schema.String.annotate({ description: "The gateway key (`svc_...`), shown once." }),
  key_prefix: Schema.String,
  name: Schema.NullOr(Schema.String),
  tier: Schema.String,
  permissions: Schema.Array(Schema.String),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  org_id: Schema.String,
  rotation_days: Schema.NullOr(Schema.Int),
  replaces: Schema.optionalKey(Schema.String.annotate({ description: "On rotation: the id of the key this one replaces." })),
  warning: Schema.String
}).annotate({ identifier: "MintedKey" })

const KeyList = Schema.Struct({ keys: Schema.Array(Key) })

const AuditPage = Schema.Struct({
  entries: Schema.Array(Schema.Struct({
    id: Schema.String,
    at: Schema.String,
    actor: Schema.String,
    action: Schema.String,
    target: Schema.NullOr(Schema.String),
    org_id: Schema.NullOr(Schema.String),
    details: Schema.Unknown
  })),
  next_before: Schema.NullOr(Schema.String)
})

const SelfKey = Schema.Struct({
  key_prefix: Schema.String,
  org_id: Schema.String,
  tier: Schema.String,
  permissions: Schema.Array(Schema.String),
  models: Schema.NullOr(Schema.Array(Schema.String)),
  expires_at: Schema.NullOr(Instant)
})

const Scopes = Schema.Struct({
  scopes: Schema.Array(Schema.Struct({
    name: Scope,
    description: Schema.String,
    routes: Schema.Array(Schema.String).annotate({ description: "The routes that require this scope, as `METHOD /path`. A key with no scopes may call every one." })
  }))
})

const noStore = ["Cache-Control"] as const
const write = { kind: "portal", abilities: ["ability:keys.write"] } as const
const keyId = { id: "The key's id." }

export const keyRoutes = [
  route({
    method: "GET", path: "/api/v1/keys/scopes", operationId: "listScopes", tag: "Keys", summary: "The scope vocabulary of gateway keys",
    auth: { kind: "none" }, responses: [{ status: 200, description: "Every scope with its meaning and the routes it allows.", body: Scopes }]
  }),
  route({
    method: "POST", path: "/api/keys", operationId: "createKey", tag: "Keys", summary: "Create a gateway key",
    auth: write, requestHeaders: ["Idempotency-Key"], requestBody: KeyCreateRequest,
    responses: [{ status: 201, description: "The key, shown once.", body: MintedKey, headers: [...noStore, "X-Service-Idempotent-Replay"] }],
    errors: ["not_found"]
  }),
  route({
    method: "GET", path: "/api/v1/keys", operationId: "listKeys", tag: "Keys", summary: "List the organisation's keys",
    auth: { kind: "portal", abilities: ["ability:keys.read"] },
    query: [{ name: "org_id", description: "A sub-organisation of the caller's organisation.", schema: Schema.String }],
    responses: [{ status: 200, description: "The keys (never the secrets).", body: KeyList, headers: noStore }],
    errors: ["not_found"]
  }),
  route({
    method: "PUT", path: "/api/keys/:id", operationId: "replaceKey", tag: "Keys", summary: "Replace a key's editable fields (absent fields are cleared)",
    auth: write, pathParameters: keyId, requestHeaders: ["Idempotency-Key"], requestBody: KeyUpdateRequest,
    responses: [{ status: 200, description: "The key after the change.", body: Key, headers: ["X-Service-Idempotent-Replay"] }],
    errors: ["not_found", "key_not_active"]
  }),
  route({
    method: "PATCH", path: "/api/keys/:id", operationId: "updateKey", tag: "Keys", summary: "Change some of a key's editable fields",
    auth: write, pathParameters: keyId, requestHeaders: ["Idempotency-Key"], requestBody: KeyUpdateRequest,
    responses: [{ status: 200, description: "The key after the change.", body: Key, headers: ["X-Service-Idempotent-Replay"] }],
    errors: ["not_found", "key_not_active"]
  }),
  route({
    method: "POST", path: "/api/keys/:id/rotate", operationId: "rotateKey", tag: "Keys", summary: "Rotate a key: the old one stops at once, the successor inherits its settings",
    auth: write, pathParameters: keyId, requestHeaders: ["Idempotency-Key"],
    responses: [{ status: 201, description: "The successor key, shown once.", body: MintedKey, headers: [...noStore, "X-Service-Idempotent-Replay"] }],
    errors: ["not_found", "key_not_active"]
  }),
  route({
    method: "POST", path: "/api/keys/:id/revoke", operationId: "revokeKey", tag: "Keys", summary: "Revoke a key",
    auth: write, pathParameters: keyId,
    responses: [{ status: 200, description: "The revoked key.", body: Key }],
    errors: ["not_found"]
  }),
  route({
    method: "GET", path: "/api/v1/audit", operationId: "listAudit", tag: "Keys", summary: "The key-management audit log",
    auth: { kind: "portal", abilities: ["ability:admin"] },
    query: [
      { name: "limit", description: "Page size, 1-1000 (default 100).", schema: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })) },
      { name: "before", description: "The `next_before` of the previous page.", schema: Schema.String },
      { name: "org_id", description: "Only this organisation's entries.", schema: Schema.String }
    ],
    responses: [{ status: 200, description: "Newest first.", body: AuditPage }]
  }),
  route({
    method: "GET", path: "/api/v1/self/balance", operationId: "selfBalance", tag: "Keys", summary: "The key's own organisation's balance",
    auth: { kind: "gatewayKey" },
    responses: [{ status: 200, description: "The balance.", body: Schema.Struct({ org_id: Schema.String, balance_micros: Micros, balance_usd: Usd }) }]
  }),
  route({
    method: "GET", path: "/api/v1/self/usage", operationId: "selfUsage", tag: "Keys", summary: "The key's own organisation's usage",
    auth: { kind: "gatewayKey" },
    query: [...pageQuery, { name: "from", description: "ISO 8601 start (default: 30 days before `to`).", schema: Schema.String }, { name: "to", description: "ISO 8601 end (default: now).", schema: Schema.String }],
    responses: [{ status: 200, description: "Daily totals and a page of records.", body: Usage }]
  }),
  route({
    method: "GET", path: "/api/v1/self/key", operationId: "selfKey", tag: "Keys", summary: "The calling key's scopes and model allowlist",
    auth: { kind: "gatewayKey" },
    responses: [{ status: 200, description: "The key.", body: SelfKey }]
  })
]
