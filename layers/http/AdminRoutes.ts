import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { applyRetention, checkLedger, listMailOutbox, createLicence, createOidcClient, createOrg, createPortalToken, creditWallet, issueScimToken, listScimTokens, removeIdp, revokeKey, revokeScimToken, setOidcIdp, setOperator, setRoutingFallbacks, setSamlIdp, showIdp } from "../AdminOperations.ts"
import { SsoConnections } from "../../services/SsoConnections.ts"
import { ScimTokens } from "../../services/ScimTokens.ts"
import { chainState, listKeys, listOrganisations, type PageQuery } from "../AdminDirectory.ts"
import { ChainVerifier } from "../../services/ChainVerifier.ts"
import { actorOf } from "./KeyRoutes.ts"
import { readPage } from "./pagination.ts"
import { RoutingPolicies } from "../../services/RoutingPolicies.ts"
import { Retention } from "../../services/Retention.ts"
import { SqlClient } from "effect/sql"
import { Keys } from "../../services/Keys.ts"
import { OidcProvider } from "../oidc/OidcProvider.ts"
import { Licences } from "../../services/Licences.ts"
import { Organisations } from "../../services/Organisations.ts"
import { PortalTokens } from "../../services/PortalTokens.ts"
import { Wallets } from "../../services/Wallets.ts"
import type { ApiError } from "../../src/http/ApiError.ts"
import type { DomainError } from "./domainErrors.ts"
import { requirePortal } from "./auth.ts"
import { readDocumentedBody } from "./body.ts"
import { apiRoute } from "./api/apiRoutes.ts"

/**
 * The admin API (`ability:admin` portal tokens): what `programs/cli.ts` calls when embedded storage is held by a
 * running gateway (PGlite is single-process). Each route answers the JSON the CLI prints. The GET lists under
 * /api/admin/orgs, /keys and /chains are the portal's admin view (an operator's session; layers/AdminDirectory.ts).
 */
export const AdminRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const post = (
    path: HttpRouter.PathInput,
    op: (input: Record<string, unknown>, actor: string) => Effect.Effect<unknown, ApiError | DomainError, Keys | Organisations | PortalTokens | Wallets | Licences | OidcProvider | SqlClient.SqlClient | RoutingPolicies | Retention | SsoConnections | ScimTokens>,
    headers: Record<string, string> = {}
  ) =>
    router.add("POST", path, Effect.gen(function*() {
      const admin = yield* requirePortal("ability:admin")
      const input = yield* readDocumentedBody(apiRoute("POST", path))
      return HttpServerResponse.jsonUnsafe(yield* op(input, actorOf(admin).id), { headers })
    }))
  yield* post("/api/admin/orgs", createOrg)
  yield* post("/api/admin/portal-tokens", createPortalToken)
  yield* post("/api/admin/wallets/credit", creditWallet)
  yield* post("/api/admin/keys/revoke", revokeKey)
  yield* post("/api/admin/routing/fallbacks", setRoutingFallbacks)
  yield* post("/api/admin/licences", createLicence)
  yield* post("/api/admin/oidc/clients", createOidcClient)
  yield* post("/api/admin/accounts/operator", setOperator)
  yield* post("/api/admin/sso/oidc", setOidcIdp)
  yield* post("/api/admin/sso/saml", setSamlIdp)
  yield* post("/api/admin/sso/remove", removeIdp)
  // A read of one organisation's settings, named by `?org_id=` or `?key_prefix=` (the CLI's --org / --key-prefix).
  const getOfOrg = (path: HttpRouter.PathInput, op: (input: Record<string, unknown>) => Effect.Effect<unknown, ApiError | DomainError, Keys | SsoConnections | ScimTokens>) =>
    router.add("GET", path, Effect.gen(function*() {
      yield* requirePortal("ability:admin")
      const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
      return HttpServerResponse.jsonUnsafe(
        yield* op({ org_id: search.get("org_id") ?? undefined, key_prefix: search.get("key_prefix") ?? undefined }),
        { headers: { "cache-control": "no-store" } }
      )
    }))
  yield* getOfOrg("/api/admin/sso", showIdp)
  // SCIM tokens (docs/sso.md): issued once (never cached on the way back), listed without the token, revoked.
  yield* post("/api/admin/sso/scim-tokens", issueScimToken, { "cache-control": "no-store" })
  yield* getOfOrg("/api/admin/sso/scim-tokens", listScimTokens)
  yield* post("/api/admin/sso/scim-tokens/revoke", revokeScimToken)

  // The admin view's directory: read-only, paged, metadata only.
  const list = (path: HttpRouter.PathInput, read: (page: PageQuery) => Effect.Effect<unknown, ApiError | DomainError, SqlClient.SqlClient | ChainVerifier>) =>
    router.add("GET", path, Effect.gen(function*() {
      yield* requirePortal("ability:admin")
      const page = yield* readPage
      return HttpServerResponse.jsonUnsafe(yield* read(page), { headers: { "cache-control": "no-store" } })
    }))
  yield* list("/api/admin/orgs", listOrganisations)
  yield* list("/api/admin/keys", listKeys)
  yield* list("/api/admin/chains", chainState)
  yield* post("/api/admin/retention/apply", applyRetention)
  yield* router.add("GET", "/api/admin/mail/outbox", Effect.gen(function*() {
    yield* requirePortal("ability:admin")
    const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    return HttpServerResponse.jsonUnsafe(
      yield* listMailOutbox({ to: search.get("to") ?? undefined, limit: search.get("limit") ?? undefined }),
      { headers: { "cache-control": "no-store" } }
    )
  }))
  yield* router.add("GET", "/api/admin/ledger/check", Effect.gen(function*() {
    yield* requirePortal("ability:admin")
    return HttpServerResponse.jsonUnsafe(yield* checkLedger)
  }))
}))
