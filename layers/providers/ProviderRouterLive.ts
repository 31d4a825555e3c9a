import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { AppConfig } from "../../services/AppConfig.ts"
import { Byok } from "../../services/Byok.ts"
import type { GatewayPrincipal } from "../../services/Keys.ts"
import {
  ModelNotAllowed,
  ModelNotFound,
  ProviderNotConfigured,
  ProviderRouter,
  type RouteTarget,
  UnknownRoutingStrategy
} from "../../services/ProviderRouter.ts"
import {
  type Capability,
  findModel,
  findModelCandidates,
  LOCAL_ECONOMY_PROVIDER_SLUG,
  LOCAL_PROVIDER_SLUG,
  type ModelLookup,
  modelServesRoute,
  PROVIDERS,
  upstreamCapabilityFor
} from "../../src/providers/catalogue.ts"
import { providerEnvStem, providerKeyFileEnv } from "../../src/providers/env.ts"
import { parseKeyFile } from "../../src/providers/keyFile.ts"
import { upstreamAuthHeaders, upstreamUrl } from "../../src/providers/upstream.ts"
import { bedrockRuntimeOrigin, parseBedrockCredential } from "../../src/providers/bedrock/credentials.ts"
import { bedrockRequestSigner } from "../../src/providers/bedrock/sigv4.ts"
import { decideRoute, type RoutingCandidate } from "../../src/routing/costRouter.ts"
import { parseRoutingStrategy } from "../../src/routing/strategy.ts"

/** The built-in providers answer at LOCAL_PROVIDER_URL and need no real key (the fake provider accepts any). */
const BUILT_IN = new Set([LOCAL_PROVIDER_SLUG, LOCAL_ECONOMY_PROVIDER_SLUG])

/**
 * Pooled provider keys are read once at start from the files named by PROVIDER_<SLUG>_API_KEY_FILE (never from
 * the environment itself, never logged), one key per line. The built-in providers need none.
 */
const loadPooledKeys = (files: ReadonlyMap<string, string>) => {
  const keys = new Map<string, ReadonlyArray<string>>()
  for (const provider of PROVIDERS) {
    if (!provider.pooled) continue
    const file = files.get(providerEnvStem(provider.slug))
    if (file !== undefined && file !== "") {
      const pool = parseKeyFile(readFileSync(file, "utf8"))
      if (pool.length === 0) throw new Error(`${providerKeyFileEnv(provider.slug)} names a file holding no key`)
      keys.set(provider.slug, pool)
    } else if (BUILT_IN.has(provider.slug)) {
      keys.set(provider.slug, ["local"])
    }
  }
  return keys
}

const isAllowed = (principal: GatewayPrincipal, slug: string, modelId: string) => {
  const allow = principal.models
  return allow === null || allow.length === 0 || allow.includes(modelId) || allow.includes(`${slug}/${modelId}`)
}

export const ProviderRouterLive = Layer.effect(
  ProviderRouter,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const byok = yield* Byok
    const pooledKeys = yield* Effect.try({ try: () => loadPooledKeys(config.settings.providerKeyFiles), catch: (e) => e as Error }).pipe(Effect.orDie)
    const timeoutOf = (slug: string, fallback: number) => {
      return config.settings.providerTimeoutsMs.get(providerEnvStem(slug)) ?? fallback
    }

    /** The target for one (provider, model) with this organisation's keys; undefined when it cannot be called. */
    const targetOf = (lookup: ModelLookup, capability: Capability, credentials: ReadonlyMap<string, string>): RouteTarget | undefined => {
      // The organisation's own key wins: it chose to pay the provider itself (5% markup instead of 15%).
      const own = credentials.get(lookup.provider.slug)
      if (own !== undefined) return targetWithKey(lookup, capability, own, "byok")
      const pool = pooledKeys.get(lookup.provider.slug)
      if (pool === undefined) return targetWithKey(lookup, capability, undefined, "pooled")
      if (pool.length === 1) return targetWithKey(lookup, capability, pool[0], "pooled")
      const keyTargets: Array<RouteTarget> = []
      for (const [index, key] of pool.entries()) {
        const t = targetWithKey(lookup, capability, key, "pooled")
        if (t === undefined) return undefined
        keyTargets.push({ ...t, keySlot: { index, count: pool.length } })
      }
      return { ...keyTargets[0]!, keyTargets }
    }

    const targetWithKey = (
      lookup: ModelLookup,
      capability: Capability,
      key: string | undefined,
      keyMode: RouteTarget["keyMode"]
    ): RouteTarget | undefined => {
      const { provider, model } = lookup
      // Chat and messages may be served by the other format's endpoint (the relay translates the body).
      const upstreamCapability = upstreamCapabilityFor(lookup, capability)
      if (upstreamCapability === undefined) return undefined
      const endpoint = provider.endpoints[upstreamCapability]!
      // An AWS key pair names its region, whose origin serves the call (PROVIDER_AWS_BEDROCK_BASE_URL still wins);
      // each request is then signed as it goes out instead of carrying the key.
      const aws = endpoint.auth === "sigv4" && key !== undefined ? parseBedrockCredential(key) : undefined
      const origin = aws?.kind === "sigv4" ? { ...provider, baseUrl: bedrockRuntimeOrigin(aws.aws.region) } : provider
      const url = upstreamUrl(origin, upstreamCapability, config.env, { modelId: model.id })
      if (url === undefined || key === undefined) return undefined
      return {
        provider,
        model,
        endpoint,
        url,
        streamUrl: upstreamUrl(origin, upstreamCapability, config.env, { modelId: model.id, stream: true }) ?? url,
        ...(aws?.kind === "sigv4"
          ? { authHeaders: endpoint.headers, sign: bedrockRequestSigner(aws.aws) }
          : { authHeaders: upstreamAuthHeaders(endpoint, aws?.kind === "api-key" ? aws.apiKey : key) }),
        keyMode,
        timeoutMs: timeoutOf(provider.slug, provider.timeoutMs)
      }
    }

    const callableBy = (principal: GatewayPrincipal | undefined, credentials: ReadonlyMap<string, string>) => (lookup: ModelLookup) =>
      (principal === undefined || isAllowed(principal, lookup.provider.slug, lookup.model.id)) &&
      lookup.model.capabilities.some((capability) => targetOf(lookup, capability, credentials) !== undefined)

    return ProviderRouter.of({
      callable: (principal) =>
        principal === undefined
          ? Effect.succeed(callableBy(undefined, new Map()))
          : Effect.map(byok.credentialsOf(principal.orgId), (credentials) => callableBy(principal, credentials)),
      resolve: ({ modelId, capability, principal, routing }) =>
        Effect.gen(function*() {
          const lookup = findModel(modelId)
          if (lookup === undefined || !modelServesRoute(lookup, capability)) {
            return yield* new ModelNotFound({ modelId, inCatalogue: lookup !== undefined })
          }
          const allow = principal.models
          if (allow !== null && allow.length > 0 && !allow.includes(lookup.model.id) && !allow.includes(modelId)) {
            return yield* new ModelNotAllowed({ modelId, allowed: allow })
          }
          const strategy = parseRoutingStrategy(routing?.header)
          if (typeof strategy === "object") return yield* new UnknownRoutingStrategy({ strategy: strategy.invalid })
          const credentials = yield* byok.credentialsOf(principal.orgId)
          const target = targetOf(lookup, capability, credentials)
          if (target === undefined) return yield* new ProviderNotConfigured({ provider: lookup.provider.slug })
          // A `provider/model` request pins its provider: routing only moves calls that named a bare model id.
          if (strategy === undefined || routing === undefined || modelId !== lookup.model.id) return target

          const candidateOf = (c: ModelLookup, t: RouteTarget | undefined): RoutingCandidate => ({
            provider: c.provider.slug,
            inputUsdPerMTok: c.model.inputUsdPerMTok,
            outputUsdPerMTok: c.model.outputUsdPerMTok,
            keyMode: t?.keyMode ?? "pooled",
            available: t !== undefined && isAllowed(principal, c.provider.slug, c.model.id)
          })
          const targets = new Map<string, RouteTarget | undefined>()
          const candidates = findModelCandidates(lookup.model.id)
            .filter((c) => modelServesRoute(c, capability))
            .map((c) => {
              const t = c.provider.slug === target.provider.slug ? target : targetOf(c, capability, credentials)
              targets.set(c.provider.slug, t)
              return candidateOf(c, t)
            })
          const { chosen, decision } = decideRoute({
            strategy,
            model: lookup.model.id,
            current: candidateOf(lookup, target),
            candidates,
            bodyBytes: routing.bodyBytes,
            maxOutputTokens: capability === "embeddings" ? 0 : routing.maxOutputTokens
          })
          return { ...(targets.get(chosen.provider) ?? target), routingDecision: decision }
        })
    })
  })
)
