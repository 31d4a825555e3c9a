import type { SqlClient } from "effect/sql"

/**
 * Appends one row to the audit log (who, what, on which record, for which organisation). Run it inside the
 * transaction of the change it records. `details` never carries secrets or personal data (no e-mail addresses).
 */
export const appendAudit = (
  sql: SqlClient.SqlClient,
  entry: { readonly actor: string; readonly action: string; readonly target: string | null; readonly orgId: string | null; readonly details?: unknown }
) =>
  sql`INSERT INTO audit_log ${
    sql.insert({
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      org_id: entry.orgId,
      details: entry.details === undefined ? null : JSON.stringify(entry.details)
    })
  }`

/** Timestamps come back as Date (pg) or string (PGlite in some paths): always answer ISO 8601. */
export const isoOrNull = (v: unknown): string | null =>
  v === null || v === undefined ? null : (v instanceof Date ? v : new Date(String(v))).toISOString()
