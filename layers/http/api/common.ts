import { Schema } from "effect"

/** An RFC 3339 instant. */
export const Instant = Schema.String.annotate({ format: "date-time" })

/** Money as the wallet counts it: integer micro-dollars (1 USD = 1,000,000). */
export const Micros = Schema.Int.annotate({ description: "Integer micro-dollars (1 USD = 1,000,000)." })

/** Money for people: US dollars as a decimal string. */
export const Usd = Schema.String.annotate({ description: "US dollars as a decimal string.", examples: ["2.000000"] })

/**
 * A string field the validators read with `optionalString`: absent and null both mean "not given", longer than
 * `maxLength` is refused.
 */
export const optionalText = (maxLength: number, description?: string) =>
  Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(maxLength)).annotate(description === undefined ? {} : { description })))

/** An object whose listed members are documented and which may carry more (a provider's body, an operator report). */
export const openObject = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.StructWithRest(Schema.Struct(fields), [Schema.Record(Schema.String, Schema.Unknown)])

export const AnyObject = Schema.Record(Schema.String, Schema.Unknown)

/** 32 lowercase hex characters: a receipt id. */
export const Jti = Schema.String.check(Schema.isPattern(/^[0-9a-f]{32}$/)).annotate({ description: "32 lowercase hex characters." })

/** SHA-256 as 64 lowercase hex characters. */
export const Sha256Hex = Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/))

/** `{ org_id, from, to, summary, failures, records, next_cursor }`: a page of usage for one organisation. */
export const Usage = Schema.Struct({
  org_id: Schema.String,
  from: Instant,
  to: Instant,
  summary: Schema.Array(Schema.Struct({
    day: Schema.String,
    provider: Schema.String,
    model: Schema.String,
    calls: Schema.Int,
    input_tokens: Schema.Int,
    output_tokens: Schema.Int,
    billed_micros: Micros,
    billed_usd: Usd
  })),
  /** Calls refused after the key was accepted (each sealed as a failed-call receipt), per UTC day and error code. */
  failures: Schema.Array(Schema.Struct({
    day: Schema.String,
    status: Schema.Int,
    error_code: Schema.String,
    calls: Schema.Int
  })),
  records: Schema.Array(Schema.Struct({
    id: Schema.String,
    request_id: Schema.String,
    key_id: Schema.String,
    provider: Schema.String,
    model: Schema.String,
    capability: Schema.String,
    key_mode: Schema.String,
    input_tokens: Schema.Int,
    output_tokens: Schema.Int,
    billed_micros: Micros,
    billed_usd: Usd,
    upstream_cost_micros: Micros,
    markup_micros: Micros,
    estimated: Schema.Boolean,
    partial: Schema.Boolean,
    receipt_jti: Schema.NullOr(Schema.String),
    finished_at: Schema.String
  })),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Usage" })

/** Query parameters of the cursor-paged lists (layers/http/pagination.ts). */
export const pageQuery = [
  { name: "limit", description: "Page size.", schema: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })) },
  { name: "cursor", description: "The `next_cursor` of the previous page.", schema: Schema.String }
] as const
