import { Context, Data, Effect } from "effect"

/** A sub-organisation was asked for under a parent that does not exist. */
export class ParentOrganisationNotFound extends Data.TaggedError("ParentOrganisationNotFound")<{ readonly parentId: string }> {}

export class Organisations extends Context.Service<Organisations, {
  /** A new organisation with an empty wallet; `parentId` makes it a sub-organisation. */
  readonly create: (input: { readonly name: string; readonly parentId?: string }) => Effect.Effect<{ readonly orgId: string }, ParentOrganisationNotFound>
  readonly exists: (orgId: string) => Effect.Effect<boolean>
}>()("privacy-relay/Organisations") {}
