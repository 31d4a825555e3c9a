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
 * Codes in the source that docs/errors.md does not list yet: `already_verified` is not answered over HTTP (re-sending a
 * verification always answers 202, so nobody learns which addresses have accounts). This list may only shrink: a
 * new code goes into docs/errors.md.
 */
export const NOT_YET_CATALOGUED: ReadonlyArray<string> = [
  "already_verified"
]
