/**
 * The operator CLI: `node programs/cli.ts <command> [--flag value ...]`. Prints one JSON object on stdout; on
 * failure prints `{"error":{"code","message"}}` and exits non-zero. Secrets never come from argv: the admin
 * token is read from DATA_DIR/admin-token, database and Redis URLs from the environment.
 *
 * Storage: with DATABASE_URL it connects directly. With embedded storage (PGlite, single-process) it calls the
 * running gateway's admin API when DATA_DIR/gateway.json names a live process, and otherwise opens DATA_DIR itself.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import {
  checkLedger,
  createLicence,
  createOidcClient,
  createOrg,
  createPortalToken,
  creditWallet,
  revokeKey,
  rotateReceiptKeys
} from "../layers/AdminOperations.ts"
import { gatewayServicesLayer } from "../layers/GatewayLive.ts"
import { parseGatewayConfig } from "../services/AppConfig.ts"
import { ApiError } from "../src/http/ApiError.ts"

type Flags = Record<string, string>
type Operation = (flags: Flags) => Effect.Effect<unknown, ApiError, any>

interface Command {
  readonly usage: string
  /** The admin API route serving this command for a running embedded gateway. */
  readonly route: { readonly method: "GET" | "POST"; readonly path: string }
  /** Flags -> the JSON input shared by the API and the direct operation. */
  readonly input: (flags: Flags) => Record<string, unknown>
  readonly run: (input: Record<string, unknown>) => Effect.Effect<unknown, ApiError, any>
}

const orgInput = (f: Flags) => ({ org_id: f.org, key_prefix: f["key-prefix"] })

const COMMANDS: Record<string, Command> = {
  "org create": {
    usage: "org create --name NAME [--parent ORG_ID]",
    route: { method: "POST", path: "/api/admin/orgs" },
    input: (f) => ({ name: f.name, parent_id: f.parent }),
    run: createOrg
  },
  "portal-token create": {
    usage: "portal-token create (--org ORG_ID | --key-prefix svc_xxxxxx) --abilities a,b [--name NAME]",
    route: { method: "POST", path: "/api/admin/portal-tokens" },
    input: (f) => ({ ...orgInput(f), abilities: f.abilities, name: f.name }),
    run: createPortalToken
  },
  "wallet credit": {
    usage: "wallet credit (--org ORG_ID | --key-prefix svc_xxxxxx) --usd AMOUNT",
    route: { method: "POST", path: "/api/admin/wallets/credit" },
    input: (f) => ({ ...orgInput(f), usd: f.usd }),
    run: creditWallet
  },
  "key revoke": {
    usage: "key revoke --prefix svc_xxxxxx",
    route: { method: "POST", path: "/api/admin/keys/revoke" },
    input: (f) => ({ key_prefix: f.prefix ?? f["key-prefix"] }),
    run: (input) => revokeKey(input, "cli")
  },
  "licence create": {
    usage: "licence create --usd AMOUNT",
    route: { method: "POST", path: "/api/admin/licences" },
    input: (f) => ({ usd: f.usd }),
    run: createLicence
  },
  "oidc client create": {
    usage: "oidc client create --redirect-uri URI[,URI] [--name NAME]",
    route: { method: "POST", path: "/api/admin/oidc/clients" },
    input: (f) => ({ redirect_uri: f["redirect-uri"], name: f.name }),
    run: createOidcClient
  },
  "receipts keys rotate": {
    usage: "receipts keys rotate",
    route: { method: "POST", path: "/api/admin/receipts/keys/rotate" },
    input: () => ({}),
    run: () => rotateReceiptKeys
  },
  "ledger check": {
    usage: "ledger check",
    route: { method: "GET", path: "/api/admin/ledger/check" },
    input: () => ({}),
    run: () => checkLedger
  }
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

const fail = (code: string, message: string): never => {
  process.stdout.write(JSON.stringify({ error: { code, message } }) + "\n")
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
  const tokenFile = join(dataDir, "admin-token")
  if (!existsSync(tokenFile)) fail("admin_token_missing", `No admin token at ${tokenFile}; start the gateway once with this DATA_DIR.`)
  const token = readFileSync(tokenFile, "utf8").trim()
  const res = await fetch(`${url}${command.route.path}`, {
    method: command.route.method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: command.route.method === "POST" ? JSON.stringify(input) : undefined
  })
  const body = await res.json().catch(() => ({ error: { code: "bad_response", message: `HTTP ${res.status}` } }))
  if (!res.ok) {
    process.stdout.write(JSON.stringify(body) + "\n")
    process.exit(1)
  }
  return body
}

const direct = async (env: Record<string, string | undefined>, command: Command, input: Record<string, unknown>) => {
  const runtime = ManagedRuntime.make(gatewayServicesLayer({ ...env, LOG_LEVEL: env.LOG_LEVEL ?? "error" }) as Layer.Layer<any, any, never>)
  try {
    return await runtime.runPromise(
      command.run(input).pipe(Effect.catchTag("ApiError", (e) => Effect.sync(() => fail(e.code, e.message)))) as Effect.Effect<unknown, never, any>
    )
  } finally {
    await runtime.dispose()
  }
}

export const main = async (argv: ReadonlyArray<string>, env: Record<string, string | undefined>) => {
  const { words, flags } = parseArgs(argv)
  const name = Object.keys(COMMANDS).find((n) => n.split(" ").every((w, i) => words[i] === w))
  if (name === undefined) {
    fail("unknown_command", `Commands:\n${Object.values(COMMANDS).map((c) => `  node programs/cli.ts ${c.usage}`).join("\n")}`)
    return
  }
  const command = COMMANDS[name]
  const input = Object.fromEntries(Object.entries(command.input(flags)).filter(([, v]) => v !== undefined))
  const config = parseGatewayConfig(env)
  const url = config.databaseUrl === undefined ? runningGateway(config.dataDir) : undefined
  const result = url !== undefined
    ? await viaAdminApi(url, config.dataDir!, command, input)
    : await direct(env, command, input)
  process.stdout.write(JSON.stringify(result) + "\n")
}

if (import.meta.main) {
  main(process.argv.slice(2), process.env).then(
    () => process.exit(0),
    (e) => fail("cli_failed", e instanceof Error ? e.message : String(e))
  )
}
