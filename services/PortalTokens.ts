import { Context, Data, type Effect } from "effect"
import type { OrganisationNotFound } from "./Wallets.ts"

export interface PortalPrincipal {
  readonly tokenId: string
  readonly orgId: string
  readonly abilities: ReadonlyArray<string>
}

/** Abilities a new portal token may not carry because no such ability exists. */
export class UnknownAbilities extends Data.TaggedError("UnknownAbilities")<{ readonly abilities: ReadonlyArray<string> }> {}

/** The bearer is not a live portal token: malformed, unknown or revoked (the three answer alike). */
export class PortalTokenNotValid extends Data.TaggedError("PortalTokenNotValid")<{}> {}

/** Portal tokens (`spt_...`): the dashboard/script axis, separate from gateway keys. */
export class PortalTokens extends Context.Service<PortalTokens, {
  readonly create: (input: { readonly orgId: string; readonly abilities: ReadonlyArray<string>; readonly name?: string }) =>
    Effect.Effect<{ readonly id: string; readonly token: string; readonly abilities: ReadonlyArray<string> }, UnknownAbilities | OrganisationNotFound>
  /** Unknown, malformed or revoked tokens fail alike (the HTTP layer answers 401 `portal_auth_required`). */
  readonly authenticate: (bearer: string) => Effect.Effect<PortalPrincipal, PortalTokenNotValid>
}>()("privacy-relay/PortalTokens") {}
