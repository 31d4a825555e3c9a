import { Effect } from "effect"
import { invalidInput } from "../AdminErrors.ts"
import { base64UrlRandom } from "../pg/randomToken.ts"
import { OidcProvider } from "./OidcProvider.ts"

type Input = Readonly<Record<string, unknown>>

const isRedirectUri = (s: string) => {
  try {
    const url = new URL(s)
    const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)
    return (url.protocol === "https:" || (url.protocol === "http:" && loopback)) && url.hash === ""
  } catch {
    return false
  }
}

/**
 * `cli.ts oidc client create --redirect-uri URI [--redirect-uri URI2] [--name NAME]` -> `{ client_id, client_secret }`.
 * A confidential client for the authorization code flow with PKCE and refresh tokens. Redirect URIs must be https
 * (or http on the loopback, for development). The secret is shown once; the database keeps it sealed under the KEK.
 */
export const createOidcClient = (input: Input) =>
  Effect.gen(function*() {
    const raw = input["redirect_uri"] ?? input["redirect_uris"]
    const uris = (Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : []).map((u) => String(u).trim()).filter(Boolean)
    if (uris.length === 0) return yield* invalidInput("redirect_uri", "redirect_uri is required (--redirect-uri URI).")
    const bad = uris.find((u) => !isRedirectUri(u))
    if (bad !== undefined) return yield* invalidInput("redirect_uri", `Not an https (or loopback http) redirect URI without fragment: ${bad}`)
    const name = typeof input["name"] === "string" ? input["name"] : undefined
    const clientId = `oc_${base64UrlRandom(16)}`
    const clientSecret = base64UrlRandom(32)
    const metadata = {
      client_id: clientId,
      client_secret: clientSecret,
      ...(name === undefined ? {} : { client_name: name }),
      redirect_uris: uris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic"
    }
    // Through the provider's own storage: the client's secret is sealed at rest like every other payload.
    yield* (yield* OidcProvider).registerClient(metadata)
    return { client_id: clientId, client_secret: clientSecret, redirect_uris: uris }
  })
