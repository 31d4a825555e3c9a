import { Data } from "effect"

/**
 * The operator commands' own refusals (layers/AdminOperations.ts, AdminDirectory.ts, oidc/clients.ts,
 * sso/configureSso.ts), shared by the admin HTTP API and the operator CLI.
 * They say what is wrong in the operator's words and nothing of HTTP: layers/http/domainErrors.ts gives them their
 * status and code (docs/errors.md), for the API and for the CLI alike.
 */

/** An input the command cannot take: the field (`path`, as the admin API names it) and why, with the CLI flag to use. */
export class AdminInputInvalid extends Data.TaggedError("AdminInputInvalid")<{ readonly path: string; readonly message: string }> {}

/** The refusal of one input (`invalid_request` with `details.path` at the edge). */
export const invalidInput = (path: string, message: string) => new AdminInputInvalid({ path, message })

/** `admin operator grant|revoke`: no account has the e-mail address. */
export class OperatorAccountNotFound extends Data.TaggedError("OperatorAccountNotFound")<{}> {}

/** `admin operator grant`: only an account with a verified e-mail address can become an operator. */
export class OperatorEmailNotVerified extends Data.TaggedError("OperatorEmailNotVerified")<{}> {}
