// The receipt verification keys: a JWKS the caller already has, or a cache that fetches
// GET /api/.well-known/service-receipt-pubkeys.jwks from the gateway. Keys rotate and rotated-out keys stay
// published, so a kid the cache does not know means "fetched before a rotation": it refetches once.
import { keyResolverFromJwks, type Jwks } from "../wire/receipts/jwks.ts"
import { GATEWAY_IDENTITY_PROBE_PATH, parseGatewayUrl } from "../client/gatewayUrl.ts"
import { JwksError } from "./errors.ts"

export type { Jwks, ReceiptJwk } from "../wire/receipts/jwks.ts"

/** Anything that can answer "which key has this kid": a createJwksCache, or your own. */
export interface JwksSource {
  /** The key for a kid; undefined when no published key has it. May throw JwksError. */
  readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined>
}

/** The `jwks` option of the verifiers: a JWKS object or a source such as createJwksCache. */
export type JwksOption = Jwks | JwksSource

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Why `value` is not a JWKS of keys with kids, or null. Single malformed keys fail only their own kid. */
const jwksProblem = (value: unknown): string | null => {
  if (!isRecord(value) || !Array.isArray(value.keys)) return "not a JWKS: expected an object with a keys array"
  if (!value.keys.every((key) => isRecord(key) && typeof key.kid === "string")) return "not a JWKS: every key needs a kid"
  return null
}

const resolvers = new WeakMap<object, JwksSource["resolveKey"]>()

/** The key resolver for a `jwks` option; throws JwksError jwks_invalid when it is neither a JWKS nor a source. */
export const keyResolverOf = (jwks: JwksOption): JwksSource["resolveKey"] => {
  if (isRecord(jwks) && typeof jwks.resolveKey === "function") return (kid) => (jwks as JwksSource).resolveKey(kid)
  const problem = jwksProblem(jwks)
  if (problem !== null) throw new JwksError("jwks_invalid", `jwks option: ${problem}`)
  // Imported keys are remembered per JWKS object, so verifying many receipts imports each key once.
  let resolver = resolvers.get(jwks)
  if (resolver === undefined) {
    resolver = keyResolverFromJwks(jwks as Jwks)
    resolvers.set(jwks, resolver)
  }
  return resolver
}

export interface JwksCacheOptions {
  /** The gateway's base URL: https, or plain http to a loopback address. */
  readonly gatewayUrl: string
  /** Default: globalThis.fetch. */
  readonly fetch?: typeof fetch
  /** How long a fetched JWKS is used before it is fetched again. Default 10 minutes. */
  readonly ttlMs?: number
  /** Clock in ms, for tests. Default Date.now. */
  readonly now?: () => number
}

export interface JwksCache extends JwksSource {
  /** The cached JWKS, fetched when absent or older than ttlMs. */
  readonly get: () => Promise<Jwks>
  /** Fetches now (concurrent callers share one request). */
  readonly refresh: () => Promise<Jwks>
  /**
   * Takes a JWKS just fetched from the same gateway by other means (the client's identity probe reads the same
   * document) as the cached set, so it is not fetched again. Ignored when it is not a JWKS.
   */
  readonly seed: (jwks: unknown) => void
}

export const DEFAULT_JWKS_TTL_MS = 10 * 60 * 1000

/** A JWKS fetched from the gateway and cached; see the file comment for when it refetches. */
export const createJwksCache = (options: JwksCacheOptions): JwksCache => {
  let base: string
  try {
    base = parseGatewayUrl(options.gatewayUrl)
  } catch (cause) {
    throw new JwksError("invalid_gateway_url", `gatewayUrl: ${(cause as Error).message}`, { cause })
  }
  const url = `${base}${GATEWAY_IDENTITY_PROBE_PATH}`
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  const ttlMs = options.ttlMs ?? DEFAULT_JWKS_TTL_MS
  const now = options.now ?? Date.now
  let cached: { readonly jwks: Jwks; readonly at: number; readonly resolveKey: JwksSource["resolveKey"] } | undefined
  let inflight: Promise<NonNullable<typeof cached>> | undefined

  const load = async (): Promise<NonNullable<typeof cached>> => {
    let response: Response
    try {
      response = await doFetch(url, { headers: { accept: "application/json" } })
    } catch (cause) {
      throw new JwksError("jwks_unreachable", `the gateway at ${base} could not be reached for its receipt keys (${url})`, { cause })
    }
    if (response.status !== 200) {
      throw new JwksError("jwks_unreachable", `the gateway answered ${response.status} for its receipt keys (${url})`, {
        status: response.status
      })
    }
    let body: unknown
    try {
      body = await response.json()
    } catch (cause) {
      throw new JwksError("jwks_invalid", `${url} did not answer JSON`, { status: 200, cause })
    }
    const problem = jwksProblem(body)
    if (problem !== null) throw new JwksError("jwks_invalid", `${url}: ${problem}`, { status: 200 })
    const jwks = body as Jwks
    return { jwks, at: now(), resolveKey: keyResolverFromJwks(jwks) }
  }

  const refresh = async () => {
    inflight ??= load().finally(() => {
      inflight = undefined
    })
    cached = await inflight
    return cached
  }

  const current = async () => (cached !== undefined && now() - cached.at < ttlMs ? cached : refresh())

  return {
    get: async () => (await current()).jwks,
    refresh: async () => (await refresh()).jwks,
    seed: (jwks) => {
      if (jwksProblem(jwks) === null) cached = { jwks: jwks as Jwks, at: now(), resolveKey: keyResolverFromJwks(jwks as Jwks) }
    },
    resolveKey: async (kid) => {
      const wasCached = cached !== undefined && now() - cached.at < ttlMs
      const before = await current()
      const key = await before.resolveKey(kid)
      // Unknown kid in a set fetched earlier: the set may predate a rotation. Refetch once (unless another caller
      // already has); a set this very call fetched is already current.
      if (key !== undefined || !wasCached) return key
      const after = cached !== before ? cached! : await refresh()
      return after.resolveKey(kid)
    }
  }
}
