/**
 * The operator CLI: `node programs/cli.ts <command> [--flag value ...]`. Prints one JSON object on stdout; on
 * failure prints `{"error":{"code","message"}}` and exits non-zero. `help`, `--help` and `<command> --help` print
 * plain text instead and exit 0. Secrets never come from argv: the admin
 * token is read from DATA_DIR/admin-token, database and Redis URLs from the environment.
 *
 * Storage: with DATABASE_URL it connects directly. With embedded storage (PGlite, single-process) it calls the
 * running gateway's admin API when DATA_DIR/gateway.json names a live process, and otherwise opens DATA_DIR itself.
 */
import type { Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseGatewayConfig } from "../src/config/gatewayConfig.ts"
import type { DomainError } from "../layers/http/domainErrors.ts"
import type { ApiError } from "../src/http/ApiError.ts"
import type { KekRotationProgress, KekRotationRefused } from "../layers/pg/KekRotation.ts"

// Only light modules are imported up front: help and the admin-API path (a running embedded gateway, the
// Quickstart's case) need neither Effect nor the gateway's layers, whose loading took most of the CLI's 8 s.
// The direct path imports them when it runs (see `direct`).
type AdminOperations = typeof import("../layers/AdminOperations.ts")
type Flags = Record<string, string>

interface Command {
  readonly usage: string
  /** One line for the command list. */
  readonly summary: string
  /** The rest of `help <command>`: what it does, its flags, what it prints. */
  readonly details: string
  /**
   * The admin API route serving this command for a running embedded gateway. None: the command always opens the
   * storage itself (with embedded storage, only while no gateway runs on DATA_DIR).
   */
  readonly route?: { readonly method: "GET" | "POST"; readonly path: string }
  /**
   * Opens only the database and the KEKs (layers/pg/KekRotation.ts, kekRotationLayer) instead of the gateway's
   * services, which open sealed values at start.
   */
  readonly storageOnly?: boolean
  /** Flags -> the JSON input shared by the API and the direct operation. */
  readonly input: (flags: Flags) => Record<string, unknown>
  readonly run: (ops: AdminOperations, input: Record<string, unknown>) => Effect.Effect<unknown, ApiError | DomainError | KekRotationRefused, any>
}

const orgInput = (f: Flags) => ({ org_id: f.org, key_prefix: f["key-prefix"] })

const ORG_CHOICE = "--org ORG_ID names the organisation; --key-prefix svc_xxxxxx means that key's organisation\n" +
  "(so an operator can act on a self-service key's organisation)."

const COMMANDS: Record<string, Command> = {
  "org create": {
    usage: "org create --name NAME [--parent ORG_ID]",
    summary: "create an organisation (with an empty wallet)",
    details: "--parent makes it a sub-organisation of ORG_ID (partner mode).\nPrints {\"org_id\"}.",
    route: { method: "POST", path: "/api/admin/orgs" },
    input: (f) => ({ name: f.name, parent_id: f.parent }),
    run: (ops, input) => ops.createOrg(input)
  },
  "portal-token create": {
    usage: "portal-token create (--org ORG_ID | --key-prefix svc_xxxxxx) --abilities a,b [--name NAME]",
    summary: "create a portal token (spt_...) with abilities",
    details: `${ORG_CHOICE}\n--abilities is a comma list: ability:keys.read, ability:keys.write, ability:billing.read,\n` +
      "ability:billing.write, ability:byok.write, abilities:write, ability:admin, webhooks.manage, webhooks.read.\n" +
      "Prints {\"token\",\"abilities\",\"org_id\"}; the token is shown once.",
    route: { method: "POST", path: "/api/admin/portal-tokens" },
    input: (f) => ({ ...orgInput(f), abilities: f.abilities, name: f.name }),
    run: (ops, input) => ops.createPortalToken(input)
  },
  "wallet credit": {
    usage: "wallet credit (--org ORG_ID | --key-prefix svc_xxxxxx) --usd AMOUNT",
    summary: "add USD to an organisation's wallet",
    details: `${ORG_CHOICE}\n--usd is a decimal amount (5, 12.50).\nPrints {\"org_id\",\"balance_micros\"}.`,
    route: { method: "POST", path: "/api/admin/wallets/credit" },
    input: (f) => ({ ...orgInput(f), usd: f.usd }),
    run: (ops, input) => ops.creditWallet(input)
  },
  "routing fallbacks": {
    usage: "routing fallbacks (--org ORG_ID | --key-prefix svc_xxxxxx) --models MODEL[,MODEL]",
    summary: "set an organisation's ordered fallback models (empty --models removes them)",
    details: `${ORG_CHOICE}\n--models lists up to 4 catalogue models (\"gpt-4o-mini\" or \"provider/model\"), tried in order when the\n` +
      "requested model fails before its first byte (429, 5xx, timeout, unreachable); docs/routing.md, Fallbacks.\n" +
      "Prints {\"org_id\",\"fallbacks\"}.",
    route: { method: "POST", path: "/api/admin/routing/fallbacks" },
    input: (f) => ({ ...orgInput(f), models: f.models ?? "" }),
    run: (ops, input) => ops.setRoutingFallbacks(input)
  },
  "key revoke": {
    usage: "key revoke --prefix svc_xxxxxx",
    summary: "revoke a gateway key at once",
    details: "Requests with the key then get 401 key_revoked; a key.revoked event is sent.\n" +
      "Prints {\"key_id\",\"org_id\",\"key_prefix\",\"status\":\"revoked\"}.",
    route: { method: "POST", path: "/api/admin/keys/revoke" },
    input: (f) => ({ key_prefix: f.prefix ?? f["key-prefix"] }),
    run: (ops, input) => ops.revokeKey(input, "cli")
  },
  "account operator grant": {
    usage: "account operator grant --email EMAIL",
    summary: "make a person an operator: their portal sessions get ability:admin (the admin view)",
    details: "The account must exist and have a verified e-mail address (409 email_not_verified otherwise). Takes\n" +
      "effect on the person's next request, sessions already open included; recorded in the audit log.\n" +
      "Prints {\"account_id\",\"operator\":true,\"changed\"}.",
    route: { method: "POST", path: "/api/admin/accounts/operator" },
    input: (f) => ({ email: f.email, action: "grant" }),
    run: (ops, input) => ops.setOperator(input, "cli")
  },
  "account operator revoke": {
    usage: "account operator revoke --email EMAIL",
    summary: "take the operator flag away (the admin view closes on the person's next request)",
    details: "Recorded in the audit log.\nPrints {\"account_id\",\"operator\":false,\"changed\"}.",
    route: { method: "POST", path: "/api/admin/accounts/operator" },
    input: (f) => ({ email: f.email, action: "revoke" }),
    run: (ops, input) => ops.setOperator(input, "cli")
  },
  "sso scim-token issue": {
    usage: "sso scim-token issue (--org ORG_ID | --key-prefix svc_xxxxxx)",
    summary: "issue a SCIM bearer token for the organisation's identity provider (shown once)",
    details: `${ORG_CHOICE}\nThe IdP provisions the organisation's people and groups at PUBLIC_BASE_URL/scim/v2 with it (docs/sso.md,\n` +
      "SCIM). Only its SHA-256 is stored. Prints {\"token_id\",\"token\",\"org_id\",\"scim_base_url\"}.",
    route: { method: "POST", path: "/api/admin/sso/scim-tokens" },
    input: (f) => orgInput(f),
    run: (ops, input) => ops.issueScimToken(input, "cli")
  },
  "sso scim-token list": {
    usage: "sso scim-token list (--org ORG_ID | --key-prefix svc_xxxxxx)",
    summary: "list the organisation's SCIM tokens (ids and prefixes, never a token)",
    details: `${ORG_CHOICE}\nRevoked tokens included; last_used_at is refreshed at most once a minute (null before the first use).\n` +
      "Prints {\"org_id\",\"tokens\":[{\"token_id\",\"prefix\",\"created_at\",\"last_used_at\",\"revoked_at\"}]}.",
    route: { method: "GET", path: "/api/admin/sso/scim-tokens" },
    input: (f) => orgInput(f),
    run: (ops, input) => ops.listScimTokens(input)
  },
  "sso scim-token revoke": {
    usage: "sso scim-token revoke (--org ORG_ID | --key-prefix svc_xxxxxx) --id sct_...",
    summary: "revoke a SCIM token (the IdP's next request is refused)",
    details: `${ORG_CHOICE}\nRecorded in the audit log. Prints {\"token_id\",\"org_id\",\"revoked\":true}.`,
    route: { method: "POST", path: "/api/admin/sso/scim-tokens/revoke" },
    input: (f) => ({ ...orgInput(f), token_id: f.id }),
    run: (ops, input) => ops.revokeScimToken(input, "cli")
  },
  "licence create": {
    usage: "licence create --usd AMOUNT",
    summary: "create a signed licence code worth AMOUNT, redeemable once",
    details: "Redeemed with POST /api/billing/redeem-license (docs/billing.md).\n" +
      "Prints {\"code\",\"licence_id\",\"usd\",\"issued_at\"}.",
    route: { method: "POST", path: "/api/admin/licences" },
    input: (f) => ({ usd: f.usd }),
    run: (ops, input) => ops.createLicence(input)
  },
  "oidc client create": {
    usage: "oidc client create --redirect-uri URI[,URI] [--name NAME]",
    summary: "register an OpenID Connect client",
    details: "Prints {\"client_id\",\"client_secret\"}; the secret is shown once.",
    route: { method: "POST", path: "/api/admin/oidc/clients" },
    input: (f) => ({ redirect_uri: f["redirect-uri"], name: f.name }),
    run: (ops, input) => ops.createOidcClient(input)
  },
  "sso idp set-oidc": {
    usage: "sso idp set-oidc (--org ORG_ID | --key-prefix svc_xxxxxx) --issuer URL --client-id ID --client-secret-file PATH --domains D[,D] [--jit-role member|admin|owner]",
    summary: "single sign-on (beta): sign the organisation's people in through an OpenID Connect provider",
    details: `${ORG_CHOICE}\n--issuer is the IdP's issuer (its /.well-known/openid-configuration must answer, with that issuer);\n` +
      "--client-secret-file names a file holding the client secret (never on the command line; stored sealed under the\n" +
      "KEK); --domains lists the e-mail domains it may sign in; --jit-role is the role of a person signing in for the first\n" +
      "time (default member). Register the redirect URI PUBLIC_BASE_URL/api/v1/portal/sso/ORG_ID/oidc/callback at the IdP.\n" +
      "Replaces any IdP the organisation had; recorded in the audit log (sso.configured). docs/sso.md.\n" +
      "Prints {\"org_id\",\"protocol\":\"oidc\",\"issuer\",\"client_id\",\"allowed_domains\",\"jit_role\",...}; never the secret.",
    route: { method: "POST", path: "/api/admin/sso/oidc" },
    input: (f) => ({
      ...orgInput(f),
      issuer: f.issuer,
      client_id: f["client-id"],
      client_secret: secretFromFile(f, "client-secret"),
      allowed_domains: f.domains,
      jit_role: f["jit-role"]
    }),
    run: (ops, input) => ops.setOidcIdp(input, "cli")
  },
  "sso idp set-saml": {
    usage: "sso idp set-saml (--org ORG_ID | --key-prefix svc_xxxxxx) (--metadata-file PATH | --metadata-url URL | --entity-id ID --sso-url URL --certificate-file PATH) --domains D[,D] [--jit-role member|admin|owner]",
    summary: "single sign-on (beta): sign the organisation's people in through a SAML 2.0 identity provider",
    details: `${ORG_CHOICE}\nThe IdP's metadata XML (a file, or a URL read now and not refreshed) gives its entity id, its HTTP-Redirect\n` +
      "sign-in URL and its signing certificates; --entity-id, --sso-url and --certificate-file (PEM) give them one by one\n" +
      "or override the metadata. Give the IdP this gateway's SP metadata: PUBLIC_BASE_URL/api/v1/portal/sso/ORG_ID/saml/metadata.\n" +
      "--domains and --jit-role as for set-oidc. Recorded in the audit log (sso.configured). docs/sso.md.\n" +
      "Prints {\"org_id\",\"protocol\":\"saml\",\"entity_id\",\"sso_url\",\"certificates\",\"allowed_domains\",\"jit_role\",...}.",
    route: { method: "POST", path: "/api/admin/sso/saml" },
    input: (f) => ({
      ...orgInput(f),
      metadata_xml: textFromFile(f, "metadata-file"),
      metadata_url: f["metadata-url"],
      entity_id: f["entity-id"],
      sso_url: f["sso-url"],
      certificate: textFromFile(f, "certificate-file"),
      allowed_domains: f.domains,
      jit_role: f["jit-role"]
    }),
    run: (ops, input) => ops.setSamlIdp(input, "cli")
  },
  "sso idp show": {
    usage: "sso idp show (--org ORG_ID | --key-prefix svc_xxxxxx)",
    summary: "show the organisation's identity provider (never its client secret)",
    details: `${ORG_CHOICE}\n404 sso_not_configured when it has none.\nPrints {\"org_id\",\"protocol\",...} as set-oidc / set-saml print it (never the secret).`,
    route: { method: "GET", path: "/api/admin/sso" },
    input: (f) => orgInput(f),
    run: (ops, input) => ops.showIdp(input)
  },
  "sso idp remove": {
    usage: "sso idp remove (--org ORG_ID | --key-prefix svc_xxxxxx)",
    summary: "turn single sign-on off for the organisation",
    details: `${ORG_CHOICE}\nSign-ins under way are dropped; accounts the IdP made stay. Recorded in the audit log (sso.removed).\n` +
      "Prints {\"org_id\",\"removed\":true}.",
    route: { method: "POST", path: "/api/admin/sso/remove" },
    input: (f) => orgInput(f),
    run: (ops, input) => ops.removeIdp(input, "cli")
  },
  "receipts keys rotate": {
    usage: "receipts keys rotate",
    summary: "sign receipts with a new key from now on (on demand; RECEIPT_KEY_ROTATION rotates on a schedule)",
    details: "Every gateway process signs with the new key from its next write on (a write signed with the old key is\n" +
      "re-signed). Old keys stay published in the JWKS, so receipts signed before still verify; the old private key\n" +
      "is erased. Sends key.rotated. 409 receipt_key_from_file with RECEIPT_SIGNING_KEY_FILE (replace the file).\n" +
      "Prints {\"kid\",\"previous_kid\",\"trigger\":\"manual\",\"period\":null,\"activated_at\"}.",
    route: { method: "POST", path: "/api/admin/receipts/keys/rotate" },
    input: () => ({}),
    run: (ops) => ops.rotateReceiptKeys
  },
  "receipts keys list": {
    usage: "receipts keys list",
    summary: "list the receipt signing keys and when the next scheduled rotation is due",
    details: "Never prints private material.\n" +
      "Prints {\"schedule\",\"next_rotation_at\",\"keys\":[{\"kid\",\"status\",\"trigger\",\"source\",\"activated_at\",\"retired_at\",\"period\"}]}.",
    route: { method: "GET", path: "/api/admin/receipts/keys" },
    input: () => ({}),
    run: (ops) => ops.receiptKeyStatus
  },
  "retention apply": {
    usage: "retention apply [--days N]",
    summary: "drop receipts, usage and finished webhook deliveries older than the retention period",
    details: "--days N (1-36500) overrides RETENTION_DAYS for this run; without either it refuses (invalid_request).\n" +
      "Each chain keeps verifying from its anchor (the last dropped receipt); transparency leaves stay; recorded in\n" +
      "the audit log. Gateways with RETENTION_DAYS also run it every RETENTION_INTERVAL_MS (docs/deployment.md).\n" +
      "Prints {\"cutoff\",\"receipts_v2\",\"receipts_v1\",\"receipts_failed\",\"usage_records\",\"webhook_deliveries\",\"chains_anchored\"}.",
    route: { method: "POST", path: "/api/admin/retention/apply" },
    input: (f) => ({ days: f.days }),
    run: (ops, input) => ops.applyRetention(input)
  },
  "mail outbox": {
    usage: "mail outbox [--to EMAIL] [--limit N]",
    summary: "show the newest development mails (verification links) kept instead of sent",
    details: "Without SMTP_URL the gateway keeps every mail in its database instead of sending it; this prints the\n" +
      "newest first (--limit 1-100, default 10), only those to EMAIL with --to.\n" +
      "Prints {\"transport\",\"mails\":[{\"id\",\"to\",\"subject\",\"text\",\"created_at\"}]}; with SMTP_URL set, \"transport\" is \"smtp\".",
    route: { method: "GET", path: "/api/admin/mail/outbox" },
    input: (f) => ({ to: f.to, limit: f.limit }),
    run: (ops, input) => ops.listMailOutbox(input)
  },
  "kek rotate": {
    usage: "kek rotate",
    summary: "seal every stored secret again under KEK_FILE's key (after a KEK change; KEK_PREVIOUS_FILE names the old key)",
    details: "Reads the keys from KEK_FILE (new) and KEK_PREVIOUS_FILE (old), never from the command line; docs/deployment.md,\n" +
      "Rotating the KEK. Opens every stored sealed value first and changes nothing if one opens under neither key\n" +
      "(kek_unreadable) or KEK_PREVIOUS_FILE is not set (kek_previous_missing); then re-seals in batches what the old key\n" +
      "sealed. Safe to run again and while gateways serve. Progress on stderr. No admin route: with embedded storage,\n" +
      "stop the gateway first.\n" +
      "Prints {\"kek\",\"previous_kek\",\"tables\":{TABLE:{\"values\",\"already_current\",\"rewritten\",\"changed_meanwhile\"}},\"rewritten\"}.",
    storageOnly: true,
    input: () => ({}),
    run: (ops) => ops.rotateKek({ onProgress: printKekProgress })
  },
  "ledger check": {
    usage: "ledger check",
    summary: "check every wallet against its ledger, and usage against receipts",
    details: "Prints {\"ok\",\"mismatches\",\"usage_without_receipt\",\"receipts_without_usage\"}; \"ok\": false lists\n" +
      "what disagrees. Exit status 0 either way (the check ran).",
    route: { method: "GET", path: "/api/admin/ledger/check" },
    input: () => ({}),
    run: (ops) => ops.checkLedger
  }
}

/** A file's text for `--NAME PATH`; undefined without the flag. Fails (invalid_request) when it cannot be read. */
function textFromFile(flags: Flags, name: string): string | undefined {
  const path = flags[name]
  if (path === undefined) return undefined
  try {
    return readFileSync(path, "utf8")
  } catch (e) {
    return fail("invalid_request", `--${name} ${path}: ${(e as NodeJS.ErrnoException).code ?? "unreadable"}`)
  }
}

/**
 * A secret for `--NAME-file PATH` (surrounding whitespace dropped). A secret given on the command line itself
 * (`--NAME VALUE`) is refused: argv is visible to every user of the machine and kept in shell history.
 */
function secretFromFile(flags: Flags, name: string): string | undefined {
  if (flags[name] !== undefined) fail("invalid_request", `--${name} is not taken on the command line (other users can read it there): put it in a file and give --${name}-file PATH.`)
  return textFromFile(flags, `${name}-file`)?.trim()
}

/** One stderr line per batch of `kek rotate`: table names and counts only. */
function printKekProgress(p: KekRotationProgress) {
  process.stderr.write(`kek rotate: ${p.phase} ${p.table}: ${p.seen} value(s) seen` + (p.phase === "rewrite" ? `, ${p.rewritten} rewritten\n` : "\n"))
}

/** Commands added by other capabilities register here (see docs/configuration.md). */
export const registerCommand = (name: string, command: Command) => {
  COMMANDS[name] = command
}

const parseArgs = (argv: ReadonlyArray<string>) => {
  const words: Array<string> = []
  const flags: Flags = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a.startsWith("--")) {
      const [name, inline] = a.slice(2).split("=", 2)
      if (inline !== undefined) flags[name] = inline
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[name] = argv[++i]
      else flags[name] = "true"
    } else words.push(a)
  }
  return { words, flags }
}

const fail = (code: string, message: string, extra: Record<string, unknown> = {}): never => {
  process.stdout.write(JSON.stringify({ error: { code, message, ...extra } }) + "\n")
  process.exit(1)
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The running embedded gateway's URL, when DATA_DIR/gateway.json names a live process. */
const runningGateway = (dataDir: string | undefined) => {
  if (dataDir === undefined) return undefined
  const file = join(dataDir, "gateway.json")
  if (!existsSync(file)) return undefined
  try {
    const { url, pid } = JSON.parse(readFileSync(file, "utf8"))
    return typeof url === "string" && typeof pid === "number" && pidAlive(pid) ? url : undefined
  } catch {
    return undefined
  }
}

const viaAdminApi = async (url: string, dataDir: string, command: Command, input: Record<string, unknown>) => {
  const route = command.route
  if (route === undefined) {
    return fail(
      "gateway_running",
      `"${command.usage}" opens the embedded database itself, which the gateway running on DATA_DIR ${dataDir} holds: stop it, run the command, start it again.`
    )
  }
  const tokenFile = join(dataDir, "admin-token")
  if (!existsSync(tokenFile)) fail("admin_token_missing", `No admin token at ${tokenFile}; start the gateway once with this DATA_DIR.`)
  const token = readFileSync(tokenFile, "utf8").trim()
  // A read carries its input in the query string.
  const query = new URLSearchParams(Object.entries(input).filter((e): e is [string, string] => typeof e[1] === "string"))
  const path = route.method === "GET" && query.size > 0 ? `${route.path}?${query}` : route.path
  const res = await fetch(`${url}${path}`, {
    method: route.method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: route.method === "POST" ? JSON.stringify(input) : undefined
  })
  const body = await res.json().catch(() => ({ error: { code: "bad_response", message: `HTTP ${res.status}` } }))
  if (!res.ok) {
    process.stdout.write(JSON.stringify(body) + "\n")
    process.exit(1)
  }
  return body
}

/** Opens the storage itself: loads Effect and the gateway's services (seconds), so it says so on stderr first. */
const direct = async (env: Record<string, string | undefined>, command: Command, input: Record<string, unknown>, progress: string) => {
  process.stderr.write(`privacy-relay cli: ${progress} (this takes a few seconds)...\n`)
  const settings = { ...env, LOG_LEVEL: env.LOG_LEVEL ?? "error" }
  const [{ Effect, ManagedRuntime }, layer, ops, { asApiError, isDomainError }] = await Promise.all([
    import("effect"),
    command.storageOnly
      ? import("../layers/pg/KekRotation.ts").then((m) => m.kekRotationLayer(settings))
      : import("../layers/GatewayLive.ts").then((m) => m.gatewayServicesLayer(settings)),
    import("../layers/AdminOperations.ts"),
    import("../layers/http/domainErrors.ts")
  ])
  const runtime = ManagedRuntime.make(layer as Layer.Layer<any, any, never>)
  try {
    return await runtime.runPromise(
      command.run(ops, input).pipe(
        Effect.catchIf(
          // Refusals of the operation itself (an ApiError, or a service's own error mapped as the HTTP API maps it).
          (e): e is ApiError | DomainError => (e as { _tag?: unknown })._tag === "ApiError" || isDomainError(e),
          (e) => Effect.sync(() => {
            const api = asApiError(e)
            return fail(api.code, api.message)
          })
        ),
        Effect.catchTag("KekRotationRefused", (e) => Effect.sync(() => fail(e.reason, e.message, e.details === undefined ? {} : { details: e.details })))
      ) as Effect.Effect<unknown, never, any>
    )
  } finally {
    await runtime.dispose()
  }
}

const PROGRAM = "node programs/cli.ts"

const generalHelp = (): string => {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length))
  return [
    "Privacy Relay operator CLI",
    "",
    `Usage: ${PROGRAM} <command> [--flag value ...]`,
    `       ${PROGRAM} help [<command>]     (also --help, or <command> --help)`,
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    "",
    "Each command prints one JSON object on stdout and exits 0; on failure it prints",
    "{\"error\":{\"code\",\"message\"}} and exits 1. Nothing secret is ever taken from the command line.",
    "",
    "Storage: with DATABASE_URL the CLI connects to PostgreSQL itself. With embedded storage (DATA_DIR, default",
    "./.data) it asks the running gateway (DATA_DIR/gateway.json, authorised by DATA_DIR/admin-token), or, when no",
    "gateway runs, opens DATA_DIR itself (slower: it loads the gateway and the embedded database; it says so on stderr).",
    "Settings: docs/configuration.md.",
    ""
  ].join("\n")
}

const commandHelp = (name: string, command: Command): string =>
  [`${PROGRAM} ${command.usage}`, "", `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`, command.details, ""].join("\n")

const findCommand = (words: ReadonlyArray<string>) =>
  Object.keys(COMMANDS).find((n) => n.split(" ").every((w, i) => words[i] === w))

const unknownCommand = (words: ReadonlyArray<string>): never =>
  fail(
    "unknown_command",
    `${words.length === 0 ? "No command given" : `Unknown command "${words.join(" ").slice(0, 80)}"`}; ` +
      `run "${PROGRAM} --help" for the list.`,
    { commands: Object.values(COMMANDS).map((c) => c.usage) }
  )

/** `help`, `help <command>`, `--help`/`-h` anywhere: plain text on stdout. Answers whether help was asked for. */
const printHelpIfAsked = (argv: ReadonlyArray<string>): boolean => {
  const flagged = argv.some((a) => a === "--help" || a === "-h")
  const words = argv.filter((a) => a !== "--help" && a !== "-h" && !a.startsWith("--"))
  const topic = words[0] === "help" ? words.slice(1) : flagged ? words : undefined
  if (topic === undefined) return false
  const name = findCommand(topic)
  if (topic.length > 0 && name === undefined) unknownCommand(topic)
  process.stdout.write(name === undefined ? generalHelp() : commandHelp(name, COMMANDS[name]!))
  return true
}

export const main = async (argv: ReadonlyArray<string>, env: Record<string, string | undefined>) => {
  if (printHelpIfAsked(argv)) return
  const { words, flags } = parseArgs(argv)
  const name = findCommand(words)
  if (name === undefined) return unknownCommand(words)
  const command = COMMANDS[name]!
  const input = Object.fromEntries(Object.entries(command.input(flags)).filter(([, v]) => v !== undefined))
  const config = parseGatewayConfig(env)
  const url = config.databaseUrl === undefined ? runningGateway(config.dataDir) : undefined
  const result = url !== undefined
    ? await viaAdminApi(url, config.dataDir!, command, input)
    : await direct(env, command, input, config.databaseUrl === undefined
      ? `no running gateway found for DATA_DIR ${config.dataDir ?? ":memory:"}; opening the embedded database itself`
      : "connecting to PostgreSQL (DATABASE_URL)")
  process.stdout.write(JSON.stringify(result) + "\n")
}

if (import.meta.main) {
  main(process.argv.slice(2), process.env).then(
    () => process.exit(0),
    (e) => fail("cli_failed", e instanceof Error ? e.message : String(e))
  )
}
