/**
 * Environment names and base-URL resolution for providers (DESIGN 7: `PROVIDER_<SLUG>_BASE_URL`,
 * `PROVIDER_<SLUG>_API_KEY_FILE`, slug upper-cased with `-` as `_`; `LOCAL_PROVIDER_URL` for `local`).
 */
import type { ProviderEntry } from "./provider.ts"

export type Env = Readonly<Record<string, string | undefined>>

/** `azure-openai` -> `AZURE_OPENAI`. */
export const providerEnvStem = (slug: string): string => slug.toUpperCase().replaceAll("-", "_")

/** `PROVIDER_<SLUG>_BASE_URL`. */
export const providerBaseUrlEnv = (slug: string): string => `PROVIDER_${providerEnvStem(slug)}_BASE_URL`

/** `PROVIDER_<SLUG>_API_KEY_FILE`: path of the file holding the pooled key (secrets never in env values or argv). */
export const providerKeyFileEnv = (slug: string): string => `PROVIDER_${providerEnvStem(slug)}_API_KEY_FILE`

export const LOCAL_PROVIDER_URL_ENV = "LOCAL_PROVIDER_URL"

/** The built-in providers served by the fake provider at LOCAL_PROVIDER_URL (`local-economy` is `local`, cheaper). */
const BUILT_IN_SLUGS: ReadonlySet<string> = new Set(["local", "local-economy"])

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim()

// Endpoint paths start with "/", so a trailing slash on the origin would produce "//v1/...".
const withoutTrailingSlash = (url: string): string => url.replace(/\/+$/, "")

/**
 * The origin to call for a provider. Precedence: for the built-in `local` and `local-economy`, `LOCAL_PROVIDER_URL`;
 * then `PROVIDER_<SLUG>_BASE_URL` (`PROVIDER_LOCAL_BASE_URL` for `local`); then the catalogue
 * default. Answers `undefined` when the provider's default is only a placeholder
 * (`baseUrlNeedsOverride`: Azure OpenAI, AWS Bedrock) and no override is set: such a provider is
 * not callable, and the relay should answer it like an unconfigured provider rather than dial a
 * made-up host.
 */
export const resolveProviderBaseUrl = (provider: ProviderEntry, env: Env): string | undefined => {
  const override =
    (BUILT_IN_SLUGS.has(provider.slug) ? nonEmpty(env[LOCAL_PROVIDER_URL_ENV]) : undefined) ??
    nonEmpty(env[providerBaseUrlEnv(provider.slug)])
  if (override !== undefined) return withoutTrailingSlash(override)
  if (provider.baseUrlNeedsOverride) return undefined
  return withoutTrailingSlash(provider.baseUrl)
}
