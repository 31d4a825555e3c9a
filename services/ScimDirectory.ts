import { Context, Data, Effect } from "effect"

/**
 * The failures of SCIM operations, each with the `scimType` of RFC 7644 section 3.12 it answers with (the routes map
 * them, layers/http/ScimRoutes.ts). `detail` is for people and never echoes a token or an e-mail address.
 */
export class ScimNotFound extends Data.TaggedError("ScimNotFound")<{ readonly resourceType: "User" | "Group"; readonly id: string }> {}
/** The `filter` parameter does not parse, or names an attribute the resource type does not have. */
export class ScimInvalidFilter extends Data.TaggedError("ScimInvalidFilter")<{ readonly detail: string }> {}
/** The body does not match the schema: not a JSON object, a wrong type, an attribute the resource does not have. */
export class ScimInvalidSyntax extends Data.TaggedError("ScimInvalidSyntax")<{ readonly detail: string }> {}
/** A PATCH operation whose path is malformed or names an attribute the resource does not have. */
export class ScimInvalidPath extends Data.TaggedError("ScimInvalidPath")<{ readonly detail: string }> {}
/** A required value is missing or a value is not acceptable (e.g. no e-mail address, a member that is no User). */
export class ScimInvalidValue extends Data.TaggedError("ScimInvalidValue")<{ readonly detail: string }> {}
/** userName, a group's displayName or the e-mail address is already taken (409). */
export class ScimUniqueness extends Data.TaggedError("ScimUniqueness")<{ readonly detail: string }> {}
/** A change this organisation may not make, e.g. the e-mail address of an account other organisations share. */
export class ScimMutability extends Data.TaggedError("ScimMutability")<{ readonly detail: string }> {}
/** The change would leave the organisation without an active owner; nothing was changed. */
export class ScimLastOwner extends Data.TaggedError("ScimLastOwner")<{}> {}

export type ScimFailure =
  | ScimNotFound
  | ScimInvalidFilter
  | ScimInvalidSyntax
  | ScimInvalidPath
  | ScimInvalidValue
  | ScimUniqueness
  | ScimMutability
  | ScimLastOwner

/** A SCIM resource as JSON (RFC 7643), with `meta.location` under the request's base URL. */
export type ScimResource = Readonly<Record<string, unknown>>

export interface ScimListQuery {
  readonly filter?: string
  /** 1-based (RFC 7644 section 3.4.2.4). */
  readonly startIndex: number
  readonly count: number
}

export interface ScimList {
  readonly totalResults: number
  readonly startIndex: number
  readonly resources: ReadonlyArray<ScimResource>
}

/** Where an operation acts: the token's organisation, and the base URL for `meta.location` and member `$ref`s. */
export interface ScimScope {
  readonly orgId: string
  readonly baseUrl: string
  /** The audit actor, `scim:<token id>`. */
  readonly actor: string
}

/**
 * An organisation's people and groups as its identity provider sees them (SCIM 2.0 Users and Groups). A User is an
 * account with a membership in the organisation; a Group gives its members an organisation role (its name decides
 * which, docs/sso.md). Deactivating (`active: false`) or deleting a User suspends or removes the membership, ends the
 * account's portal sessions and OpenID tokens at once and fires `user.deleted`, in one transaction. No change may
 * leave the organisation without an active owner.
 */
export class ScimDirectory extends Context.Service<ScimDirectory, {
  readonly listUsers: (scope: ScimScope, query: ScimListQuery) => Effect.Effect<ScimList, ScimInvalidFilter>
  readonly getUser: (scope: ScimScope, id: string) => Effect.Effect<ScimResource, ScimNotFound>
  readonly createUser: (scope: ScimScope, body: unknown) => Effect.Effect<ScimResource, ScimFailure>
  readonly replaceUser: (scope: ScimScope, id: string, body: unknown) => Effect.Effect<ScimResource, ScimFailure>
  readonly patchUser: (scope: ScimScope, id: string, body: unknown) => Effect.Effect<ScimResource, ScimFailure>
  readonly deleteUser: (scope: ScimScope, id: string) => Effect.Effect<void, ScimFailure>
  readonly listGroups: (scope: ScimScope, query: ScimListQuery) => Effect.Effect<ScimList, ScimInvalidFilter>
  readonly getGroup: (scope: ScimScope, id: string) => Effect.Effect<ScimResource, ScimNotFound>
  readonly createGroup: (scope: ScimScope, body: unknown) => Effect.Effect<ScimResource, ScimFailure>
  readonly replaceGroup: (scope: ScimScope, id: string, body: unknown) => Effect.Effect<ScimResource, ScimFailure>
  readonly patchGroup: (scope: ScimScope, id: string, body: unknown) => Effect.Effect<ScimResource, ScimFailure>
  readonly deleteGroup: (scope: ScimScope, id: string) => Effect.Effect<void, ScimFailure>
}>()("privacy-relay/ScimDirectory") {}
