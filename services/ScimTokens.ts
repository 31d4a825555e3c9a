import { Context, Data, Effect } from "effect"

/** A SCIM request without a valid bearer token: missing, malformed, unknown or revoked (401). */
export class ScimUnauthorized extends Data.TaggedError("ScimUnauthorized")<{}> {}

/** A SCIM token was asked for an organisation that does not exist. */
export class ScimOrganisationNotFound extends Data.TaggedError("ScimOrganisationNotFound")<{ readonly orgId: string }> {}

/** A token id that is not one of this organisation's SCIM tokens. */
export class ScimTokenNotFound extends Data.TaggedError("ScimTokenNotFound")<{ readonly tokenId: string }> {}

/**
 * The bearer tokens an organisation's identity provider uses on `/scim/v2` (`scim_...`). Issued by the operator per
 * organisation, shown once, stored as their SHA-256 (as portal tokens are); revoking one stops it at once.
 */
export class ScimTokens extends Context.Service<ScimTokens, {
  readonly issue: (input: { readonly orgId: string; readonly actor: string }) =>
    Effect.Effect<{ readonly id: string; readonly token: string }, ScimOrganisationNotFound>
  readonly revoke: (input: { readonly orgId: string; readonly tokenId: string; readonly actor: string }) => Effect.Effect<void, ScimTokenNotFound>
  /** Every token of the organisation, revoked ones included: metadata only, never a token or its hash. */
  readonly list: (orgId: string) => Effect.Effect<
    ReadonlyArray<{ readonly id: string; readonly prefix: string; readonly createdAt: string; readonly lastUsedAt: string | null; readonly revokedAt: string | null }>,
    ScimOrganisationNotFound
  >
  /** The organisation whose IdP holds this token. */
  readonly authenticate: (bearer: string) => Effect.Effect<{ readonly orgId: string; readonly tokenId: string }, ScimUnauthorized>
}>()("privacy-relay/ScimTokens") {}
