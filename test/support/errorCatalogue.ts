import { readFileSync } from "node:fs"

/** The codes of docs/errors.md with their documented status, read from its table. */
export const documentedErrors = (): ReadonlyMap<string, number> =>
  new Map(
    [...readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8").matchAll(/^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|/gm)]
      .map((m) => [m[2], Number(m[1])] as const)
  )

/**
 * Documented codes no test can provoke over HTTP (only a bug produces them): the envelope unit test
 * (test/src/http/ApiError.test.ts) covers them instead of the HTTP table (test/layers/http/ErrorCatalogue.test.ts).
 */
export const UNIT_ONLY_CODES: ReadonlyArray<string> = ["internal_error"]

/**
 * Codes the gateway answers that docs/errors.md does not list yet: each is documented in its feature's doc and
 * provoked by that feature's tests, but needs a gateway set up differently from the catalogue's (no payments, a
 * Stripe key, an unreachable SMTP server, a receipt key file) or cannot be reached through HTTP. This list may only
 * shrink: a new code must go into docs/errors.md.
 */
export const NOT_YET_CATALOGUED: ReadonlyArray<string> = [
  "already_verified",
  "ambiguous_prefix",
  "invalid_signature",
  "mail_unavailable",
  "payment_provider_error",
  "payments_not_configured",
  "receipt_key_from_file"
]
