import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Keys } from "../services/Keys.ts"
import { Mailer } from "../services/Mailer.ts"
import { Licences } from "../services/Licences.ts"
import { Organisations } from "../services/Organisations.ts"
import { PortalTokens } from "../services/PortalTokens.ts"
import { ReceiptKeys } from "../services/ReceiptKeys.ts"
import { ReceiptStore } from "../services/ReceiptStore.ts"
import { Retention } from "../services/Retention.ts"
import { ScimTokens } from "../services/ScimTokens.ts"
import { retentionCutoff } from "./pg/Retention.ts"
import { Wallets } from "../services/Wallets.ts"
import { MAX_FALLBACKS, RoutingPolicies } from "../services/RoutingPolicies.ts"
import { findModel } from "../src/providers/catalogue.ts"
import { InvalidUsdAmount, parseUsd } from "../src/billing/money.ts"
import { invalidInput, OperatorAccountNotFound, OperatorEmailNotVerified } from "./AdminErrors.ts"
import { appendAudit } from "./pg/audit.ts"

/**
 * The operator's commands (docs/accounts.md, docs/portal.md), shared by the admin HTTP API (`/api/admin/*`) and by
 * `programs/cli.ts` when it opens the storage itself. Inputs are plain JSON-ish records; outputs are the JSON the
 * CLI prints.
 */
type Input = Readonly<Record<string, unknown>>

const str = (input: Input, field: string): string | undefined => {
  const v = input[field]
  return typeof v === "string" && v !== "" ? v : undefined
}

/** `--org ID`, or `--key-prefix svc_xxxxxx` meaning that key's organisation. */
const resolveOrg = (input: Input) =>
  Effect.gen(function*() {
    const org = str(input, "org_id")
    if (org !== undefined) return org
    const prefix = str(input, "key_prefix")
    if (prefix !== undefined) return yield* (yield* Keys).orgOfPrefix(prefix)
    return yield* invalidInput("org_id", "Give org_id (--org) or key_prefix (--key-prefix).")
  })

/** The `usd` field (`--usd N`) as a positive amount of micro-USD; 400 `invalid_request` otherwise. */
const positiveUsd = (input: Input, example: string) =>
  Effect.gen(function*() {
    const usd = typeof input["usd"] === "number" ? String(input["usd"]) : str(input, "usd")
    if (usd === undefined) return yield* invalidInput("usd", `usd is required (--usd ${example}).`)
    const micros = yield* Effect.try({
      try: () => parseUsd(usd),
      catch: (e) => invalidInput("usd", e instanceof InvalidUsdAmount ? e.message : "usd must be a positive decimal amount.")
    })
    if (micros <= 0n) return yield* invalidInput("usd", "usd must be greater than zero.")
    return micros
  })

export const createOrg = (input: Input) =>
  Effect.gen(function*() {
    const name = str(input, "name")
    if (name === undefined) return yield* invalidInput("name", "name is required (--name).")
    const { orgId } = yield* (yield* Organisations).create({ name, parentId: str(input, "parent_id") })
    return { org_id: orgId }
  })

export const createPortalToken = (input: Input) =>
  Effect.gen(function*() {
    const orgId = yield* resolveOrg(input)
    const raw = input["abilities"]
    const abilities = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",").map((s) => s.trim()).filter(Boolean) : []
    if (abilities.length === 0 || !abilities.every((a) => typeof a === "string")) {
      return yield* invalidInput("abilities", "abilities is a non-empty list (--abilities a,b).")
    }
    const created = yield* (yield* PortalTokens).create({ orgId, abilities: abilities as Array<string>, name: str(input, "name") })
    return { token: created.token, abilities: created.abilities, org_id: orgId }
  })

export const creditWallet = (input: Input) =>
  Effect.gen(function*() {
    const orgId = yield* resolveOrg(input)
    const micros = yield* positiveUsd(input, "10")
    const { balanceMicros } = yield* (yield* Wallets).credit({ orgId, micros, kind: "adjustment", reference: "operator credit" })
    return { org_id: orgId, balance_micros: Number(balanceMicros) }
  })

/**
 * `cli.ts routing fallbacks`: an organisation's ordered fallback models (`--models a,b`; catalogue ids or
 * `provider/model`; an empty value removes the policy). Prints the organisation and its list.
 */
export const setRoutingFallbacks = (input: Input) =>
  Effect.gen(function*() {
    const orgId = yield* resolveOrg(input)
    const raw = input["models"]
    const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : undefined
    if (list === undefined) return yield* invalidInput("models", "models is required (--models a,b; an empty value removes the policy).")
    const models = list.map((m) => (typeof m === "string" ? m.trim() : "")).filter((m) => m !== "")
    if (models.length > MAX_FALLBACKS) return yield* invalidInput("models", `At most ${MAX_FALLBACKS} fallback models.`)
    const unknown = models.find((m) => findModel(m) === undefined)
    if (unknown !== undefined) return yield* invalidInput("models", `Unknown model "${unknown.slice(0, 200)}" (GET /api/v1/models?include=unavailable lists them).`)
    yield* (yield* RoutingPolicies).setFallbacks(orgId, models)
    return { org_id: orgId, fallbacks: models }
  })

export const revokeKey = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const prefix = str(input, "key_prefix")
    if (prefix === undefined) return yield* invalidInput("key_prefix", "key_prefix is required (--prefix svc_xxxxxx).")
    const { keyId, orgId } = yield* (yield* Keys).revokeByPrefix(prefix, actor)
    return { key_id: keyId, org_id: orgId, key_prefix: prefix, status: "revoked" }
  })

/** How many rows of each defect `ledger check` lists (the counts are always complete). */
const LEDGER_CHECK_SAMPLE = 100

/**
 * `cli.ts ledger check`: wallets whose balance differs from their ledger, completed billed calls without a receipt,
 * and receipts without a usage record. `ok` only when all three are empty.
 */
export const checkLedger = Effect.gen(function*() {
  const mismatches = yield* (yield* Wallets).checkLedger()
  const sealing = yield* (yield* ReceiptStore).auditSealing(LEDGER_CHECK_SAMPLE)
  return {
    ok: mismatches.length === 0 && sealing.unsealedUsage.count === 0 && sealing.receiptsWithoutUsage.count === 0,
    mismatches: mismatches.map((m) => ({
      org_id: m.orgId,
      balance_micros: Number(m.balanceMicros),
      ledger_micros: Number(m.ledgerMicros)
    })),
    usage_without_receipt: {
      count: sealing.unsealedUsage.count,
      records: sealing.unsealedUsage.sample.map((u) => ({
        usage_id: u.usageId,
        org_id: u.orgId,
        key_id: u.keyId,
        gateway_request_id: u.gatewayRequestId,
        billed_micros: Number(u.billedMicros),
        finished_at: u.finishedAt
      }))
    },
    receipts_without_usage: {
      count: sealing.receiptsWithoutUsage.count,
      receipts: sealing.receiptsWithoutUsage.sample.map((r) => ({ jti: r.jti, org_id: r.orgId, chain_id: r.chainId, seq: r.seq }))
    }
  }
})

/** `cli.ts receipts keys rotate`: a new current receipt signing key; every earlier key stays published. */
/**
 * `cli.ts retention apply [--days N]`: drops receipts, usage records and finished webhook deliveries older than N
 * days (default RETENTION_DAYS), keeping every chain verifiable from its anchor (docs/deployment.md, Retention).
 */
export const applyRetention = (input: Input, actor = "cli") =>
  Effect.gen(function*() {
    const retention = yield* Retention
    const given = typeof input["days"] === "number" ? String(input["days"]) : str(input, "days")
    if (given !== undefined && (!/^\d+$/.test(given) || Number(given) < 1 || Number(given) > 36_500)) {
      return yield* invalidInput("days", "days must be a whole number from 1 to 36500.")
    }
    const days = given === undefined ? retention.days : Number(given)
    if (days === undefined) return yield* invalidInput("days", "RETENTION_DAYS is not set: give days (--days N) to apply a retention period once.")
    return yield* retention.apply(retentionCutoff(days, new Date()), actor)
  })

export const rotateReceiptKeys = Effect.gen(function*() {
  return yield* (yield* ReceiptKeys).rotate
})

/** `cli.ts receipts keys list` -> `{ schedule, next_rotation_at, keys: [{ kid, status, trigger, ... }] }`. */
export const receiptKeyStatus = Effect.gen(function*() {
  return yield* (yield* ReceiptKeys).status
})

/** `cli.ts kek rotate`: every stored secret sealed again under the current KEK (docs/deployment.md, Rotating the KEK). */
export { rotateKek } from "./pg/KekRotation.ts"

/** `cli.ts oidc client create --redirect-uri URI` -> `{ client_id, client_secret, redirect_uris }` (docs/accounts.md). */
export { createOidcClient } from "./oidc/clients.ts"

/** `cli.ts sso idp set-oidc|set-saml|show|remove`: an organisation's identity provider (docs/sso.md). */
export { removeIdp, setOidcIdp, setSamlIdp, showIdp } from "./sso/configureSso.ts"

/** `cli.ts licence create --usd N`: a signed licence code worth N USD, redeemable once by any organisation. */
export const createLicence = (input: Input) =>
  Effect.gen(function*() {
    const micros = yield* positiveUsd(input, "25")
    const licence = yield* (yield* Licences).issue(micros)
    return { code: licence.code, licence_id: licence.licenceId, usd: licence.usd, issued_at: licence.issuedAt }
  })

/**
 * `cli.ts account operator grant|revoke --email EMAIL`: the operator flag that gives this person's portal sessions
 * `ability:admin` (the admin view; docs/decisions.md). Only a verified address can be granted; the change is in the
 * audit log (no e-mail address in it) and takes effect on the person's next request, sessions already open included.
 */
export const setOperator = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const email = str(input, "email")
    if (email === undefined) return yield* invalidInput("email", "email is required (--email).")
    const action = str(input, "action")
    if (action !== "grant" && action !== "revoke") return yield* invalidInput("action", "action is grant or revoke.")
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<{ id: string; org_id: string; email_verified: boolean; operator: boolean }>`
        SELECT id, org_id, email_verified, operator_granted_at IS NOT NULL AS operator
        FROM accounts WHERE lower(email) = lower(${email}) AND deleted_at IS NULL FOR UPDATE`
      const account = rows[0]
      if (account === undefined) return yield* new OperatorAccountNotFound()
      if (action === "grant" && !account.email_verified) {
        return yield* new OperatorEmailNotVerified()
      }
      const operator = action === "grant"
      if (account.operator !== operator) {
        yield* sql`UPDATE accounts SET operator_granted_at = ${operator ? sql`now()` : sql`NULL`} WHERE id = ${account.id}`
        yield* appendAudit(sql, {
          actor,
          action: operator ? "account.operator_granted" : "account.operator_revoked",
          target: account.id,
          orgId: account.org_id
        })
      }
      return { account_id: account.id, operator, changed: account.operator !== operator }
    })).pipe(Effect.catchTag("SqlError", Effect.die))
  })

const MAIL_OUTBOX_MAX = 100

/**
 * `cli.ts mail outbox [--to EMAIL] [--limit N]`: the newest development mails (no SMTP_URL: mail is kept in the
 * `mail_outbox` table instead of being sent), so an operator can hand a newcomer their verification link.
 */
export const listMailOutbox = (input: Input) =>
  Effect.gen(function*() {
    const to = str(input, "to")
    const limitText = str(input, "limit") ?? (typeof input["limit"] === "number" ? String(input["limit"]) : "10")
    if (!/^[1-9][0-9]{0,2}$/.test(limitText) || Number(limitText) > MAIL_OUTBOX_MAX) {
      return yield* invalidInput("limit", `limit is a whole number from 1 to ${MAIL_OUTBOX_MAX} (--limit).`)
    }
    const transport = (yield* Mailer).transport
    const sql = yield* SqlClient.SqlClient
    const rows = yield* (to === undefined
      ? sql<MailRow>`SELECT id, to_address, subject, body_text, created_at FROM mail_outbox ORDER BY id DESC LIMIT ${Number(limitText)}`
      : sql<MailRow>`SELECT id, to_address, subject, body_text, created_at FROM mail_outbox WHERE lower(to_address) = lower(${to}) ORDER BY id DESC LIMIT ${Number(limitText)}`
    ).pipe(Effect.orDie)
    return {
      transport,
      mails: rows.map((r) => ({ id: Number(r.id), to: r.to_address, subject: r.subject, text: r.body_text, created_at: new Date(r.created_at).toISOString() }))
    }
  })

interface MailRow {
  readonly id: string | number
  readonly to_address: string
  readonly subject: string
  readonly body_text: string
  readonly created_at: string | Date
}

/**
 * `cli.ts sso scim-token issue --org ORG_ID` (`POST /api/admin/sso/scim-tokens`): a SCIM bearer token for the
 * organisation's identity provider, shown once (only its SHA-256 is kept). Also `list` (ids, prefixes and dates, never
 * a token) and `revoke --id sct_...` (stops it at once).
 */
export const issueScimToken = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const orgId = yield* resolveOrg(input)
    const { id, token } = yield* (yield* ScimTokens).issue({ orgId, actor })
    return { token_id: id, token, org_id: orgId, scim_base_url: "PUBLIC_BASE_URL/scim/v2" }
  })

export const listScimTokens = (input: Input) =>
  Effect.gen(function*() {
    const orgId = yield* resolveOrg(input)
    const tokens = yield* (yield* ScimTokens).list(orgId)
    return {
      org_id: orgId,
      tokens: tokens.map((t) => ({ token_id: t.id, prefix: t.prefix, created_at: t.createdAt, last_used_at: t.lastUsedAt, revoked_at: t.revokedAt }))
    }
  })

export const revokeScimToken = (input: Input, actor: string) =>
  Effect.gen(function*() {
    const orgId = yield* resolveOrg(input)
    const tokenId = str(input, "token_id")
    if (tokenId === undefined) return yield* invalidInput("token_id", "token_id is required (--id sct_...).")
    yield* (yield* ScimTokens).revoke({ orgId, tokenId, actor })
    return { token_id: tokenId, org_id: orgId, revoked: true }
  })
