import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { AppConfig } from "../../services/AppConfig.ts"
import { ProviderRouter } from "../../services/ProviderRouter.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { findModel, LOCAL_PROVIDER_SLUG, modelServesRoute, PROVIDERS } from "../../src/providers/catalogue.ts"
import { providerEnvStem, providerKeyFileEnv } from "../../src/providers/env.ts"
import { upstreamAuthHeaders, upstreamUrl } from "../../src/providers/upstream.ts"

/**
 * Pooled provider keys are read once at start from the files named by PROVIDER_<SLUG>_API_KEY_FILE (never from
 * the environment itself, never logged). The built-in `local` provider needs none.
 */
const loadPooledKeys = (env: Readonly<Record<string, string | undefined>>) => {
  const keys = new Map<string, string>()
  for (const provider of PROVIDERS) {
    if (!provider.pooled) continue
    const file = env[providerKeyFileEnv(provider.slug)]
    if (file !== undefined && file !== "") {
      const key = readFileSync(file, "utf8").trim()
      if (key === "") throw new Error(`${providerKeyFileEnv(provider.slug)} names an empty file`)
      keys.set(provider.slug, key)
    } else if (provider.slug === LOCAL_PROVIDER_SLUG) {
      keys.set(provider.slug, "local")
    }
  }
  return keys
}

export const ProviderRouterLive = Layer.effect(
  ProviderRouter,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const pooledKeys = yield* Effect.try({ try: () => loadPooledKeys(config.env), catch: (e) => e as Error }).pipe(Effect.orDie)
    const timeoutOf = (slug: string, fallback: number) => {
      const v = Number(config.env[`PROVIDER_${providerEnvStem(slug)}_TIMEOUT_MS`])
      return Number.isFinite(v) && v > 0 ? v : fallback
    }
    return ProviderRouter.of({
      resolve: ({ modelId, capability, principal }) =>
        Effect.gen(function*() {
          const lookup = findModel(modelId)
          if (lookup === undefined || !modelServesRoute(lookup, capability)) {
            return yield* new ApiError({
              status: 404,
              code: "model_not_found",
              message: lookup === undefined
                ? `Model "${modelId}" is not in the catalogue (GET /api/v1/models lists them).`
                : `Model "${modelId}" does not serve this route.`
            })
          }
          const allow = principal.models
          if (allow !== null && allow.length > 0 && !allow.includes(lookup.model.id) && !allow.includes(modelId)) {
            return yield* new ApiError({
              status: 403,
              code: "model_not_allowed",
              message: `This key may not use model "${modelId}".`,
              extra: { allowed: allow }
            })
          }
          const { provider, model } = lookup
          const endpoint = provider.endpoints[capability]!
          const url = upstreamUrl(provider, capability, config.env)
          const key = pooledKeys.get(provider.slug)
          if (url === undefined || key === undefined) {
            return yield* new ApiError({
              status: 503,
              code: "provider_not_configured",
              message: `Provider "${provider.slug}" is not configured on this gateway (no pooled key or base URL).`
            })
          }
          return {
            provider,
            model,
            endpoint,
            url,
            authHeaders: upstreamAuthHeaders(endpoint, key),
            keyMode: "pooled" as const,
            timeoutMs: timeoutOf(provider.slug, provider.timeoutMs)
          }
        })
    })
  })
)
