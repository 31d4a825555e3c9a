import { Schema } from "effect"
import { route } from "./ApiRoute.ts"
import { AnyObject, Instant, Jti, openObject, Sha256Hex } from "./common.ts"

const ChainLink = Schema.Struct({
  chain_id: Schema.String,
  seq: Schema.Int.annotate({ description: "Starts at 1, one more per receipt of the chain." }),
  prev_hash: Sha256Hex.annotate({ description: "Envelope hash of the previous receipt; 64 zeros for seq 1." })
}).annotate({ identifier: "ChainLink" })

const RoutingDecisionV1 = Schema.Struct({
  from: Schema.String, to: Schema.String, chosen_model: Schema.String, strategy: Schema.String, classifier: Schema.String
})

/** The stored, per-account receipt (`GET /api/v1/receipts`). */

/** The relay route's format (sdks/typescript/src/wire/receipts/wireFormat.ts). */
const ClientWireFormat = Schema.Literals(["openai", "anthropic"])
/** The format sent upstream: any wire-format name, so receipts naming a format added later stay valid. */
const UpstreamWireFormat = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9-]{0,31}$/)).annotate({
  description: "The wire format sent upstream: `openai`, `anthropic`, `gemini`, or another provider format's name."
})

export const ReceiptV1 = Schema.Struct({
  v: Schema.Literal("v1"),
  alg: Schema.Literal("ecdsa-p256-sha256"),
  kid: Schema.String,
  iss: Schema.String,
  sub: Schema.String.annotate({ description: "The gateway key's prefix." }),
  jti: Jti,
  iat: Schema.Int,
  chain: ChainLink,
  claims: Schema.Struct({
    capability: Schema.String,
    provider: Schema.String,
    model: Schema.String,
    tokens_in: Schema.Int,
    tokens_out: Schema.Int,
    hash_upstream_request: Sha256Hex,
    hash_upstream_response: Sha256Hex,
    routing_decision: Schema.NullOr(RoutingDecisionV1),
    tokenisation_mode: Schema.String,
    engine_version: Schema.NullOr(Schema.String)
  }),
  sig: Schema.String.annotate({ description: "base64url raw r||s (ECDSA P-256, SHA-256) over the JCS bytes of the envelope without `sig`." })
}).annotate({ identifier: "ReceiptV1" })

/** The receipt of every completed relay call: `X-Service-Receipt-V2` (base64 of this JSON) or the `receipt-v2` stream trailer. */
export const ReceiptV2 = Schema.Struct({
  v: Schema.Literal(2),
  alg: Schema.Literal("ES256"),
  kid: Schema.String,
  iss: Schema.String,
  jti: Jti,
  iat: Schema.Int,
  timestamp: Instant,
  request_id: Schema.String.annotate({ description: "The provider's response id." }),
  provider: Schema.String,
  model: Schema.String,
  routing_decision: Schema.optionalKey(Schema.Struct({
    from: Schema.String, to: Schema.String, chosen_model: Schema.String, classifier: Schema.String, savings_pct: Schema.Number, strategy: Schema.String,
    key_slot: Schema.optionalKey(Schema.String.annotate({ description: "Which of the provider's pooled keys served the call (`key 2 of 3`), when it has several. Never the key." }))
  })),
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  hash_upstream_request: Sha256Hex.annotate({
    description: "SHA-256 of the JCS form of the JSON body relayed to the provider: the attested egress_sha256, or with `extensions.translation` the translated body the gateway sent."
  }),
  hash_upstream_response: Sha256Hex.annotate({ description: "SHA-256 of the exact upstream response bytes." }),
  chain: ChainLink,
  signature: Schema.String,
  sig: Schema.String.annotate({ description: "base64url raw r||s over the JCS bytes without `signature` and `sig` (same value as `signature`)." }),
  extensions: Schema.Struct({
    request_id: Schema.String.annotate({ description: "The call's X-Request-Id." }),
    translation: Schema.optionalKey(Schema.Struct({
      from: ClientWireFormat,
      to: UpstreamWireFormat,
      hash_client_request: Sha256Hex.annotate({ description: "SHA-256 of the JCS form of the client's body (its attested egress_sha256)." })
    }).annotate({ description: "Present when the call was translated from the client's format into the provider's (OpenAI, Anthropic, Gemini; docs/relay.md)." }))
  })
}).annotate({ identifier: "ReceiptV2" })

/** `X-Service-Receipt-Failed`: a signed record of a refused or failed call whose key was accepted. */
export const FailedReceiptV2 = Schema.Struct({
  v: Schema.Literal(2),
  alg: Schema.Literal("ES256"),
  kid: Schema.String,
  iss: Schema.String,
  jti: Jti,
  iat: Schema.Int,
  timestamp: Instant,
  outcome: Schema.Literal("failed"),
  status: Schema.Int,
  error_code: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  provider: Schema.NullOr(Schema.String),
  model: Schema.NullOr(Schema.String),
  hash_upstream_request: Schema.NullOr(Sha256Hex),
  hash_upstream_response: Schema.NullOr(Sha256Hex),
  chain: ChainLink,
  signature: Schema.String,
  sig: Schema.String,
  extensions: Schema.Struct({ request_id: Schema.String })
}).annotate({ identifier: "FailedReceiptV2" })

/** `X-Service-Receipt-V3` and `POST /api/v1/receipts/countersign`: the gateway's countersignature of a v3 attestation. */
export const Countersignature = Schema.Struct({
  v: Schema.Literal("v3-countersignature"),
  alg: Schema.Literal("ES256"),
  kid: Schema.String,
  iss: Schema.String,
  jti: Schema.String,
  iat: Schema.Int,
  timestamp: Instant,
  attestation_jti: Schema.String,
  attestation_sha256: Sha256Hex,
  egress_sha256: Sha256Hex,
  provider: Schema.String,
  model: Schema.String,
  hash_upstream_request: Sha256Hex,
  hash_upstream_response: Sha256Hex,
  witness: Schema.Literals(["relayed", "asserted"]),
  receipt_jti: Schema.NullOr(Schema.String),
  translation: Schema.optionalKey(Schema.Struct({ from: ClientWireFormat, to: UpstreamWireFormat }).annotate({
    description: "Present when the gateway translated the attested body into the provider's wire format; hash_upstream_request then hashes the translated body, not egress_sha256's."
  })),
  sig: Schema.String
}).annotate({ identifier: "Countersignature" })

const VerificationResult = Schema.Struct({
  valid: Schema.Boolean,
  reason: Schema.NullOr(Schema.String),
  checks: Schema.Array(Schema.Struct({ label: Schema.String, status: Schema.Literals(["ok", "fail", "skipped"]), detail: Schema.String }))
}).annotate({ identifier: "VerificationResult" })

const envelopeOrHeader = Schema.Union([AnyObject, Schema.String]).annotate({
  description: "The envelope object, or its header value (standard base64 of the JSON)."
})

const VerifyRequest = Schema.Union([
  openObject({ v: Schema.Union([Schema.String, Schema.Number]) }).annotate({ title: "The receipt envelope itself" }),
  Schema.Struct({
    receipt: envelopeOrHeader,
    attestation: Schema.optionalKey(envelopeOrHeader.annotate({ description: "The X-Service-Attestation value, to check a v3 countersignature's binding." }))
  }).annotate({ title: "A receipt, optionally with its attestation" }),
  Schema.Struct({ jti: Schema.String }).annotate({ title: "A bare jti (refused: 401 auth_required)" })
])

const CountersignRequest = Schema.Struct({
  attestation: envelopeOrHeader,
  provider: Schema.String,
  model: Schema.String,
  hash_upstream_request: Sha256Hex,
  hash_upstream_response: Sha256Hex
})

const Jwks = Schema.Struct({
  keys: Schema.Array(Schema.Struct({
    kty: Schema.Literal("EC"), crv: Schema.Literal("P-256"), x: Schema.String, y: Schema.String,
    kid: Schema.String, alg: Schema.Literal("ES256"), use: Schema.Literal("sig")
  }))
}).annotate({ identifier: "Jwks" })

const ReceiptKeyRotation = Schema.Struct({
  kid: Schema.String.annotate({ description: "The new current key." }),
  previous_kid: Schema.NullOr(Schema.String),
  trigger: Schema.Literals(["schedule", "manual"]),
  period: Schema.NullOr(Schema.String).annotate({ description: "The schedule period the key was made for (`2025-Q2`); null on demand." }),
  activated_at: Instant
}).annotate({ identifier: "ReceiptKeyRotation" })

const ReceiptKeyStatus = Schema.Struct({
  schedule: Schema.String.annotate({ description: "RECEIPT_KEY_ROTATION (`quarterly`, `monthly`, `yearly`, `off`, a period such as `90d`), or `file` with RECEIPT_SIGNING_KEY_FILE." }),
  next_rotation_at: Schema.NullOr(Instant),
  keys: Schema.Array(Schema.Struct({
    kid: Schema.String,
    status: Schema.Literals(["current", "retired"]),
    trigger: Schema.Literals(["initial", "schedule", "manual", "file"]),
    source: Schema.Literals(["generated", "file"]),
    activated_at: Instant,
    retired_at: Schema.NullOr(Instant),
    period: Schema.NullOr(Schema.String)
  }))
}).annotate({ identifier: "ReceiptKeyStatus" })

const SignedTreeHead = Schema.Struct({
  v: Schema.Literal("transparency-sth-v1"),
  alg: Schema.Literal("ES256"),
  kid: Schema.String,
  iss: Schema.String,
  tree_size: Schema.Int,
  root_hash: Schema.String,
  timestamp: Instant,
  sig: Schema.String
}).annotate({ identifier: "SignedTreeHead" })

const InclusionProof = Schema.Struct({
  receipt_id: Schema.String,
  leaf_index: Schema.Int,
  tree_size: Schema.Int,
  receipt_hash: Schema.String,
  leaf_hash: Schema.String,
  audit_path: Schema.Array(Schema.String),
  sth: SignedTreeHead
})

const ConsistencyProof = Schema.Struct({
  first: Schema.Int,
  second: Schema.Int,
  consistency_path: Schema.Array(Sha256Hex).annotate({ description: "RFC 9162 section 2.1.4.1 consistency path, hex." }),
  sth: SignedTreeHead
}).annotate({ identifier: "ConsistencyProof" })

const readers = { kind: "portal", abilities: [], unauthenticatedCode: "auth_required" } as const

export const receiptRoutes = [
  route({
    method: "POST", path: "/api/v1/receipts/verify", operationId: "verifyReceipt", tag: "Receipts", summary: "Verify a receipt (any kind) against the gateway's keys and stored chain",
    description: "Public. Checks signature, kid, schema, freshness and chain linkage; a v3 countersignature also against the attestation when given.",
    auth: { kind: "none" },
    rawRequestBody: { mediaType: "application/json", schema: VerifyRequest, description: "A receipt envelope, `{ receipt, attestation? }` or `{ jti }`." },
    responses: [
      { status: 200, description: "Valid: every check passed.", body: VerificationResult },
      { status: 422, description: "Not valid: `reason` names the first failed check.", body: VerificationResult }
    ],
    errors: ["invalid_payload", "auth_required"]
  }),
  route({
    method: "GET", path: "/api/v1/receipts/:jti", operationId: "getReceipt", tag: "Receipts", summary: "One stored receipt of the organisation by jti",
    auth: readers, pathParameters: { jti: "The receipt id (32 lowercase hex)." },
    responses: [{ status: 200, description: "The v1 receipt.", body: ReceiptV1 }],
    errors: ["auth_required", "not_found", "receipt_expired"]
  }),
  route({
    method: "GET", path: "/api/v1/receipts", operationId: "listReceipts", tag: "Receipts", summary: "The organisation's stored receipts, newest first",
    auth: readers,
    query: [
      { name: "limit", description: "1-200 (default 50).", schema: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })) },
      { name: "cursor", description: "The `next_cursor` of the previous page.", schema: Schema.String },
      { name: "from", description: "RFC 3339 lower bound.", schema: Instant },
      { name: "to", description: "RFC 3339 upper bound.", schema: Instant },
      { name: "model", description: "Only this model.", schema: Schema.String }
    ],
    responses: [{ status: 200, description: "A page.", body: Schema.Struct({ receipts: Schema.Array(ReceiptV1), next_cursor: Schema.NullOr(Schema.String) }) }],
    errors: ["auth_required", "invalid_request"]
  }),
  route({
    method: "POST", path: "/api/v1/receipts/countersign", operationId: "countersignAttestation", tag: "Receipts", summary: "Countersign a v3 attestation for a call relayed elsewhere",
    auth: { kind: "gatewayKey" },
    rawRequestBody: { mediaType: "application/json", schema: CountersignRequest, description: "The attestation and the call's upstream hashes." },
    responses: [{ status: 200, description: "The countersignature (`witness: relayed` when this gateway relayed the call).", body: Countersignature }],
    errors: ["invalid_request", "attestation_invalid", "attestation_mismatch"]
  }),
  route({
    method: "GET", path: "/api/.well-known/service-receipt-pubkeys.jwks", operationId: "receiptKeys", tag: "Receipts", summary: "Receipt verification keys (JWKS), current first; also the gateway identity probe",
    auth: { kind: "none" }, responses: [{ status: 200, description: "Every key ever used to sign.", body: Jwks, headers: ["Cache-Control"] }]
  }),
  route({
    method: "GET", path: "/api/.well-known/service-receipt-pubkey.pem", operationId: "receiptKeyPem", tag: "Receipts", summary: "The current receipt key as PEM (for openssl)",
    auth: { kind: "none" },
    responses: [{ status: 200, description: "SubjectPublicKeyInfo PEM of the current key (the JWKS's first); cached at most until the next scheduled rotation.", content: { mediaType: "application/x-pem-file", schema: Schema.String }, headers: ["Cache-Control", "X-Service-Receipt-Kid"] }]
  }),
  route({
    method: "POST", path: "/api/admin/receipts/keys/rotate", operationId: "rotateReceiptKey", tag: "Admin", summary: "Rotate the receipt signing key now",
    description: "On demand (the schedule, RECEIPT_KEY_ROTATION, rotates on its own). The previous key is retired (its private part erased) and stays in the JWKS; `key.rotated` is sent.",
    auth: { kind: "portal", abilities: ["ability:admin"] },
    responses: [{ status: 200, description: "The new and previous key ids.", body: ReceiptKeyRotation }],
    errors: ["receipt_key_from_file"]
  }),
  route({
    method: "GET", path: "/api/admin/receipts/keys", operationId: "receiptKeyStatus", tag: "Admin", summary: "The receipt signing keys and the rotation schedule",
    auth: { kind: "portal", abilities: ["ability:admin"] },
    responses: [{ status: 200, description: "Every key ever used (current first) and when the next scheduled rotation is due.", body: ReceiptKeyStatus, headers: ["Cache-Control"] }]
  }),
  route({
    method: "GET", path: "/api/v1/transparency/sth", operationId: "transparencyHead", tag: "Receipts", summary: "The transparency log's signed tree head",
    auth: { kind: "none" }, responses: [{ status: 200, description: "The head.", body: SignedTreeHead }]
  }),
  route({
    method: "GET", path: "/api/v1/transparency/proof/:jti", operationId: "transparencyProof", tag: "Receipts", summary: "Inclusion proof of a receipt in the transparency log",
    auth: { kind: "none" }, pathParameters: { jti: "The receipt id." },
    responses: [{ status: 200, description: "The proof with the head it is for.", body: InclusionProof }],
    errors: ["not_found"]
  }),
  route({
    method: "GET", path: "/api/v1/transparency/consistency", operationId: "transparencyConsistency", tag: "Receipts", summary: "Consistency proof between two sizes of the transparency log (RFC 9162)",
    description: "Proves that the log of `first` leaves (a signed tree head you kept) is a prefix of the log of `second` leaves (default: the log now), whose signed head comes with it. Verify it against your kept head: a failure is a fork, a smaller head a rollback.",
    auth: { kind: "none" },
    query: [
      { name: "first", description: "The tree size of the head you kept (at least 1).", schema: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), required: true },
      { name: "second", description: "A later tree size (default: the log's size now).", schema: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) }
    ],
    responses: [{ status: 200, description: "The proof and the signed head of `second`.", body: ConsistencyProof }],
    errors: ["invalid_request", "tree_size_out_of_range"]
  })
]
