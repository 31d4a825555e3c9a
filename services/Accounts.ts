import { Context, Data, type Effect } from "effect"
import type { MailUnavailable } from "./Mailer.ts"
import type { OrganisationNotFound } from "./Wallets.ts"

/** An account already has this e-mail address (sign-up, self-service issuance with an e-mail). */
export class AccountExists extends Data.TaggedError("AccountExists")<{}> {}

/** No account with this id (or it was erased). */
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly accountId: string }> {}

/** The account's e-mail address is verified already: no new link is sent. */
export class AlreadyVerified extends Data.TaggedError("AlreadyVerified")<{}> {}

/** The verification token is not one this gateway issued. */
export class VerificationLinkInvalid extends Data.TaggedError("VerificationLinkInvalid")<{}> {}

/** The verification link was issued but can no longer be used: `used` once already, or past its expiry. */
export class VerificationLinkSpent extends Data.TaggedError("VerificationLinkSpent")<{ readonly used: boolean }> {}

/** The user is already a member of the organisation. */
export class AlreadyMember extends Data.TaggedError("AlreadyMember")<{}> {}

/** A sub-organisation cannot have sub-organisations (partner mode is one level deep). */
export class NestedSubOrganisation extends Data.TaggedError("NestedSubOrganisation")<{}> {}

export type Role = "owner" | "admin" | "member"
export const ROLES: ReadonlyArray<Role> = ["owner", "admin", "member"]

/** The $2 trial credit granted once per account when its e-mail is verified (spec, Limits). */
export const TRIAL_CREDIT_MICROS = 2_000_000n

export interface AccountView {
  readonly accountId: string
  readonly email: string | null
  readonly emailVerified: boolean
  /** The organisation the account was created in. */
  readonly homeOrgId: string
  readonly memberships: ReadonlyArray<{ readonly orgId: string; readonly role: Role }>
}

/**
 * Users (e-mail + scrypt password), organisations, memberships with roles and e-mail verification. Events go
 * through the outbox in the same transaction: `user.created`, `org.member_added`, `user.deleted`,
 * `billing.credit_added` (trial credit). `actor` strings are audit actors (see KeyManagement).
 */
export class Accounts extends Context.Service<Accounts, {
  /**
   * A new user with a new organisation they own; sends the verification mail. 409 `account_exists`. A mail server
   * that does not take the mail leaves the account created and `verificationSent` false (the link can be asked for
   * again), never a failed sign-up with the account made.
   */
  readonly signUp: (input: { readonly email: string; readonly password: string; readonly organisationName?: string }) =>
    Effect.Effect<{ readonly accountId: string; readonly orgId: string; readonly verificationSent: boolean }, AccountExists | AccountNotFound | AlreadyVerified>
  /**
   * (Re)sends the verification link to an unverified account. Self-service issuance with an e-mail should call
   * this with the new account id after its transaction commits.
   */
  readonly sendVerification: (accountId: string) => Effect.Effect<void, AccountNotFound | AlreadyVerified | MailUnavailable>
  /** The same, by e-mail; silently does nothing for unknown or already verified addresses (no enumeration). */
  readonly requestVerification: (email: string) => Effect.Effect<void, AccountNotFound | AlreadyVerified | MailUnavailable>
  /**
   * Consumes a verification token (once): marks the e-mail verified, sets the password when given and none is set,
   * and grants the trial credit exactly once per account.
   */
  readonly verify: (token: string, password?: string) =>
    Effect.Effect<{ readonly accountId: string; readonly orgId: string; readonly trialCredited: boolean }, VerificationLinkInvalid | VerificationLinkSpent | AccountNotFound>
  /**
   * Adds a user to `orgId` (the actor's organisation or a sub-organisation of it). An existing user fires
   * `org.member_added`; an unknown e-mail creates an unverified user (fires `user.created`, sends the link).
   */
  readonly addMember: (input: { readonly actor: string; readonly actorOrgId: string; readonly orgId: string; readonly email: string; readonly role: Role }) =>
    Effect.Effect<{ readonly accountId: string; readonly created: boolean; /** A new account's link went out (false: the mail server refused it, or no link was due). */ readonly verificationSent: boolean }, OrganisationNotFound | AlreadyMember | AccountExists | AccountNotFound | AlreadyVerified>
  /** A sub-organisation (partner mode) of the actor's organisation, with its own wallet and keys. */
  readonly createSubOrganisation: (input: { readonly actor: string; readonly parentOrgId: string; readonly name: string }) =>
    Effect.Effect<{ readonly orgId: string }, OrganisationNotFound | NestedSubOrganisation>
  readonly get: (accountId: string) => Effect.Effect<AccountView, AccountNotFound>
  /** Erases personal data (e-mail, password, sessions, pending links, dev mails) and fires `user.deleted`. */
  readonly erase: (input: { readonly actor: string; readonly accountId: string }) => Effect.Effect<void, AccountNotFound>
}>()("privacy-relay/Accounts") {}
