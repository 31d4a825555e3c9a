import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"

export interface PortalPrincipal {
  readonly tokenId: string
  readonly orgId: string
  readonly abilities: ReadonlyArray<string>
}

/** Portal tokens (`spt_...`): the dashboard/script axis, separate from gateway keys. */
export class PortalTokens extends Context.Service<PortalTokens, {
  readonly create: (input: { readonly orgId: string; readonly abilities: ReadonlyArray<string>; readonly name?: string }) =>
    Effect.Effect<{ readonly id: string; readonly token: string; readonly abilities: ReadonlyArray<string> }, ApiError>
  /** 401 `portal_auth_required` for unknown, malformed or revoked tokens. */
  readonly authenticate: (bearer: string) => Effect.Effect<PortalPrincipal, ApiError>
}>()("privacy-relay/PortalTokens") {}
