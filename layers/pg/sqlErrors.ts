import type { SqlError } from "effect/sql"

/** A unique-constraint violation from either driver (the pg driver classifies it; PGlite reports code 23505). */
export const isUniqueViolation = (e: SqlError.SqlError): boolean => {
  const reason = e.reason as { _tag?: string; cause?: { code?: string } }
  return reason._tag === "UniqueViolation" || reason.cause?.code === "23505"
}
