import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Byok, type ByokCredentialInfo } from "../../services/Byok.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { invalid, rejectUnknownFields } from "../../src/http/validate.ts"
import { getProvider } from "../../src/providers/catalogue.ts"
import { AWS_REGION, type AwsCredentials, serialiseAwsCredentials } from "../../src/providers/bedrock/credentials.ts"
import { requirePortal } from "./auth.ts"
import { readDocumentedBody } from "./body.ts"
import { apiRoute } from "./api/apiRoutes.ts"

const WRITE = "ability:byok.write"
const READ = "ability:keys.read"
/** Long enough for every provider's keys (Bedrock API keys are the longest), short enough to bound the row. */
export const MAX_BYOK_KEY_LENGTH = 4096
/** Shorter keys would be half revealed by `last4`; no provider issues keys this short. */
export const MIN_BYOK_KEY_LENGTH = 8

/** Reads need `ability:keys.read` or `ability:byok.write` (or `ability:admin`). */
const requireRead = Effect.gen(function*() {
  const principal = yield* requirePortal(undefined)
  const granted = principal.abilities
  if (granted.includes(READ) || granted.includes(WRITE) || granted.includes("ability:admin")) return principal
  return yield* new ApiError({
    status: 403,
    code: "insufficient_ability",
    message: `This portal token lacks "${READ}" (or "${WRITE}").`,
    extra: { type: "permission_error", required: [READ], granted }
  })
})

/** The `{provider}` path segment: a catalogue slug, else 404 (like any unknown resource). */
const providerParam = Effect.gen(function*() {
  const slug = (yield* HttpRouter.params)["provider"] ?? ""
  if (getProvider(slug) === undefined) {
    return yield* new ApiError({ status: 404, code: "not_found", message: `No provider "${slug.slice(0, 64)}" in the catalogue (GET /api/v1/models?include=unavailable).` })
  }
  return slug
})

/**
 * A provider key travels in an HTTP header upstream, so it must be visible ASCII without spaces. Surrounding
 * whitespace (a pasted newline) is removed; anything else is refused, never silently altered.
 */
const validateApiKey = (value: unknown): string | ApiError => {
  if (typeof value !== "string") return invalid("api_key", `"api_key" must be a string.`)
  const key = value.trim()
  if (key.length < MIN_BYOK_KEY_LENGTH) return invalid("api_key", `"api_key" must be at least ${MIN_BYOK_KEY_LENGTH} characters.`)
  if (key.length > MAX_BYOK_KEY_LENGTH) return invalid("api_key", `"api_key" must be at most ${MAX_BYOK_KEY_LENGTH} characters.`)
  if (!/^[\x21-\x7e]+$/.test(key)) return invalid("api_key", `"api_key" may only hold visible ASCII characters (no spaces).`)
  return key
}

const BEDROCK = "aws-bedrock"
const AWS_FIELDS = ["aws_access_key_id", "aws_secret_access_key", "aws_session_token", "region"]
const VISIBLE = /^[\x21-\x7e]+$/

/** An AWS key pair for Bedrock: each part is checked for shape only (AWS alone can say whether it works). */
const validateAwsCredentials = (body: Record<string, unknown>): AwsCredentials | ApiError => {
  const { aws_access_key_id: id, aws_secret_access_key: secret, aws_session_token: token, region } = body
  if (typeof id !== "string" || !/^[A-Z0-9]{16,128}$/.test(id)) {
    return invalid("aws_access_key_id", `"aws_access_key_id" must be 16 to 128 upper-case letters and digits.`)
  }
  if (typeof secret !== "string" || secret.length < 16 || secret.length > 128 || !VISIBLE.test(secret)) {
    return invalid("aws_secret_access_key", `"aws_secret_access_key" must be 16 to 128 visible ASCII characters.`)
  }
  if (token !== undefined && (typeof token !== "string" || token.length < 16 || token.length > MAX_BYOK_KEY_LENGTH || !VISIBLE.test(token))) {
    return invalid("aws_session_token", `"aws_session_token" must be 16 to ${MAX_BYOK_KEY_LENGTH} visible ASCII characters.`)
  }
  if (typeof region !== "string" || !AWS_REGION.test(region)) return invalid("region", `"region" must be an AWS region name such as "us-east-1".`)
  return { accessKeyId: id, secretAccessKey: secret, ...(typeof token === "string" ? { sessionToken: token } : {}), region }
}

const view = (c: ByokCredentialInfo) => ({ provider: c.provider, last4: c.last4, created_at: c.createdAt.toISOString() })
const noStore = { "cache-control": "no-store" }

/** Bring-your-own-key credentials (docs/byok.md), scoped to the portal token's organisation. */
export const ByokRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const byok = yield* Byok

  yield* router.add("PUT", "/api/v1/byok/:provider", Effect.gen(function*() {
    const principal = yield* requirePortal(WRITE)
    const provider = yield* providerParam
    const body = yield* readDocumentedBody(apiRoute("PUT", "/api/v1/byok/:provider"))
    // Amazon Bedrock also takes an AWS key pair and region (requests are then SigV4-signed) instead of an API key.
    if (provider === BEDROCK && body.api_key === undefined && AWS_FIELDS.some((f) => body[f] !== undefined)) {
      const unknown = rejectUnknownFields(body, AWS_FIELDS)
      if (unknown) return yield* unknown
      const aws = validateAwsCredentials(body)
      if (aws instanceof ApiError) return yield* aws
      const stored = yield* byok.put(principal.orgId, provider, serialiseAwsCredentials(aws), aws.accessKeyId)
      return HttpServerResponse.jsonUnsafe(view(stored), { headers: noStore })
    }
    const unknownField = rejectUnknownFields(body, ["api_key"])
    if (unknownField) return yield* unknownField
    const apiKey = validateApiKey(body.api_key)
    if (apiKey instanceof ApiError) return yield* apiKey
    return HttpServerResponse.jsonUnsafe(view(yield* byok.put(principal.orgId, provider, apiKey)), { headers: noStore })
  }))

  yield* router.add("GET", "/api/v1/byok", Effect.gen(function*() {
    const principal = yield* requireRead
    return HttpServerResponse.jsonUnsafe({ credentials: (yield* byok.list(principal.orgId)).map(view) }, { headers: noStore })
  }))

  yield* router.add("DELETE", "/api/v1/byok/:provider", Effect.gen(function*() {
    const principal = yield* requirePortal(WRITE)
    const provider = yield* providerParam
    if (!(yield* byok.remove(principal.orgId, provider))) {
      return yield* new ApiError({ status: 404, code: "not_found", message: `No credential for "${provider}" in this organisation.` })
    }
    return HttpServerResponse.empty({ status: 204 })
  }))
}))
