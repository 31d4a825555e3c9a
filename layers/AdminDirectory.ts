import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ChainVerifier } from "../services/ChainVerifier.ts"
import { formatUsd } from "../src/billing/money.ts"
import { invalidInput } from "./AdminErrors.ts"
import { isoOrNull } from "./pg/audit.ts"
import { decodeKeysetCursor, encodeKeysetCursor } from "./pg/keysetCursor.ts"

/**
 * The operator's read-only directory for the portal's admin view (`ability:admin`): every organisation, every
 * gateway key's metadata (never a key, never its hash) and the receipt chain verifier's state. Each list is
 * keyset-paged, newest first (chains by id), so a page stays cheap however many rows there are.
 */

export interface PageQuery {
  readonly limit: number
  readonly cursor: string | undefined
  readonly search: URLSearchParams
}

const badCursor = () => invalidInput("cursor", "cursor is not a cursor this list returned.")

/** A timestamptz as PostgreSQL prints it (`created_at::text`), the first half of the created-at cursors. */
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/
const ID_TEXT = /^[A-Za-z0-9_-]{1,100}$/

const createdAtCursor = (cursor: string | undefined) =>
  Effect.gen(function*() {
    if (cursor === undefined) return undefined
    const values = decodeKeysetCursor(cursor, 2)
    if (values === undefined || !TIMESTAMP_TEXT.test(values[0]!) || !ID_TEXT.test(values[1]!)) return yield* badCursor()
    return values as unknown as readonly [string, string]
  })

/** `?name=` of a list: at most 200 characters. */
const optionalParam = (search: URLSearchParams, name: string, pattern: RegExp, message: string) =>
  Effect.gen(function*() {
    const value = search.get(name)
    if (value === null || value === "") return undefined
    if (!pattern.test(value)) return yield* invalidInput(name, message)
    return value
  })

interface OrganisationRow {
  readonly id: string
  readonly name: string
  readonly parent_id: string | null
  readonly created_at: unknown
  readonly created_text: string
  readonly balance_micros: string | number | null
  readonly keys_active: string | number
  readonly members: string | number
}

/** Every organisation with its parent, balance, active keys and people (home accounts plus memberships). */
export const listOrganisations = (page: PageQuery) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const after = yield* createdAtCursor(page.cursor)
    const parent = yield* optionalParam(page.search, "parent_id", ID_TEXT, "parent_id is an organisation id.")
    const conditions = [sql`TRUE`]
    if (after !== undefined) conditions.push(sql`(o.created_at, o.id) < (${after[0]}::timestamptz, ${after[1]})`)
    if (parent !== undefined) conditions.push(sql`o.parent_id = ${parent}`)
    const rows = yield* sql<OrganisationRow>`
      SELECT o.id, o.name, o.parent_id, o.created_at, o.created_at::text AS created_text, w.balance_micros,
        (SELECT count(*) FROM api_keys k WHERE k.org_id = o.id AND k.status = 'active') AS keys_active,
        (SELECT count(*) FROM (
          SELECT a.id FROM accounts a WHERE a.org_id = o.id AND a.deleted_at IS NULL AND a.email IS NOT NULL
          UNION SELECT m.account_id FROM memberships m WHERE m.org_id = o.id) people) AS members
      FROM organisations o LEFT JOIN wallets w ON w.org_id = o.id
      WHERE ${sql.and(conditions)}
      ORDER BY o.created_at DESC, o.id DESC
      LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
    const shown = rows.slice(0, page.limit)
    const last = shown.at(-1)
    return {
      organisations: shown.map((r) => {
        const balance = BigInt(r.balance_micros ?? 0)
        return {
          org_id: r.id,
          name: r.name,
          parent_id: r.parent_id,
          created_at: isoOrNull(r.created_at)!,
          balance_micros: Number(balance),
          balance_usd: formatUsd(balance),
          keys_active: Number(r.keys_active),
          members: Number(r.members)
        }
      }),
      next_cursor: rows.length > page.limit && last !== undefined ? encodeKeysetCursor([last.created_text, last.id]) : null
    }
  })

export const KEY_STATUSES = ["active", "revoked", "rotated"] as const

interface KeyRow {
  readonly id: string
  readonly org_id: string
  readonly org_name: string
  readonly key_prefix: string
  readonly name: string | null
  readonly tier: string
  readonly status: (typeof KEY_STATUSES)[number]
  readonly permissions: unknown
  readonly models: unknown
  readonly created_at: unknown
  readonly created_text: string
  readonly last_used_at: unknown
  readonly revoked_at: unknown
}

const jsonList = (value: unknown): ReadonlyArray<string> | null => {
  const parsed = typeof value === "string" ? JSON.parse(value) : value
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === "string") : null
}

/** Every gateway key's metadata, optionally of one organisation or one status. The key and its hash never leave. */
export const listKeys = (page: PageQuery) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const after = yield* createdAtCursor(page.cursor)
    const org = yield* optionalParam(page.search, "org_id", ID_TEXT, "org_id is an organisation id.")
    const status = yield* optionalParam(page.search, "status", /^(active|revoked|rotated)$/, `status is one of ${KEY_STATUSES.join(", ")}.`)
    const conditions = [sql`TRUE`]
    if (after !== undefined) conditions.push(sql`(k.created_at, k.id) < (${after[0]}::timestamptz, ${after[1]})`)
    if (org !== undefined) conditions.push(sql`k.org_id = ${org}`)
    if (status !== undefined) conditions.push(sql`k.status = ${status}`)
    const rows = yield* sql<KeyRow>`
      SELECT k.id, k.org_id, o.name AS org_name, k.key_prefix, k.name, k.tier, k.status, k.permissions, k.models,
        k.created_at, k.created_at::text AS created_text, k.last_used_at, k.revoked_at
      FROM api_keys k JOIN organisations o ON o.id = k.org_id
      WHERE ${sql.and(conditions)}
      ORDER BY k.created_at DESC, k.id DESC
      LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
    const shown = rows.slice(0, page.limit)
    const last = shown.at(-1)
    return {
      keys: shown.map((k) => ({
        id: k.id,
        org_id: k.org_id,
        org_name: k.org_name,
        key_prefix: k.key_prefix,
        name: k.name,
        tier: k.tier,
        status: k.status,
        permissions: jsonList(k.permissions) ?? [],
        models: jsonList(k.models),
        created_at: isoOrNull(k.created_at)!,
        last_used_at: isoOrNull(k.last_used_at),
        revoked_at: isoOrNull(k.revoked_at)
      })),
      next_cursor: rows.length > page.limit && last !== undefined ? encodeKeysetCursor([last.created_text, last.id]) : null
    }
  })

interface ChainRow {
  readonly chain_id: string
  readonly org_id: string
  readonly kind: "v2" | "v1" | "failed"
  readonly last_seq: string | number
  readonly incident_id: string | null
  readonly incident_seq: string | number | null
  readonly incident_reason: string | null
  readonly detected_at: unknown
}

/**
 * The chain verifier's state: how many chains there are and how many have an open incident (shared by every node,
 * from the database), this process's latest pass, and a page of chains (`?state=broken`: only those with an open
 * incident) with their head and open incident.
 */
export const chainState = (page: PageQuery) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const after = page.cursor === undefined ? undefined : decodeKeysetCursor(page.cursor, 1)?.[0]
    if (page.cursor !== undefined && (after === undefined || after.length > 200)) return yield* badCursor()
    const state = yield* optionalParam(page.search, "state", /^(all|broken)$/, "state is all or broken.")
    const conditions = [sql`TRUE`]
    if (after !== undefined) conditions.push(sql`c.chain_id > ${after}`)
    if (state === "broken") conditions.push(sql`i.id IS NOT NULL`)
    const rows = yield* sql<ChainRow>`
      SELECT c.chain_id, c.org_id, c.kind, c.last_seq::text AS last_seq, i.id::text AS incident_id,
        i.seq::text AS incident_seq, i.reason AS incident_reason, i.detected_at
      FROM receipt_chains c LEFT JOIN chain_incidents i ON i.chain_id = c.chain_id AND i.repaired_at IS NULL
      WHERE ${sql.and(conditions)}
      ORDER BY c.chain_id
      LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
    const [counts] = yield* sql<{ chains: string | number; broken: string | number; repaired: string | number }>`
      SELECT (SELECT count(*) FROM receipt_chains) AS chains,
        (SELECT count(*) FROM chain_incidents WHERE repaired_at IS NULL) AS broken,
        (SELECT count(*) FROM chain_incidents WHERE repaired_at IS NOT NULL) AS repaired`.pipe(Effect.orDie)
    const pass = yield* (yield* ChainVerifier).lastPass
    const shown = rows.slice(0, page.limit)
    const last = shown.at(-1)
    return {
      summary: {
        chains: Number(counts!.chains),
        open_incidents: Number(counts!.broken),
        repaired_incidents: Number(counts!.repaired),
        last_pass: pass === undefined
          ? null
          : { finished_at: pass.finishedAt, full: pass.full, chains: pass.chains, broken: pass.broken, duration_ms: pass.durationMs }
      },
      chains: shown.map((c) => ({
        chain_id: c.chain_id,
        org_id: c.org_id,
        kind: c.kind,
        last_seq: Number(c.last_seq),
        incident: c.incident_id === null
          ? null
          : { id: c.incident_id, seq: c.incident_seq === null ? null : Number(c.incident_seq), reason: c.incident_reason!, detected_at: isoOrNull(c.detected_at)! }
      })),
      next_cursor: rows.length > page.limit && last !== undefined ? encodeKeysetCursor([last.chain_id]) : null
    }
  })
