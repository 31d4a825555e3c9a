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
