import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { nextPeriodStart, parseRotationSchedule } from "../../src/receipts/rotationSchedule.ts"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { type GatewayProcess, startGatewayProcess, stopGatewayProcess } from "../support/gatewayProcess.ts"
import { idpMetadataXml } from "../support/ssoFixtures.ts"

/** Runs `node programs/cli.ts ...` as an operator would; secrets only via env and files. */
const cli = (args: Array<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; json: any; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["programs/cli.ts", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "error", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c) => (stdout += c))
    child.stderr.on("data", (c) => (stderr += c))
    child.on("close", (code) => {
      let json: any
      try {
        json = JSON.parse(stdout.trim().split("\n").at(-1) ?? "")
      } catch {
        json = undefined
      }
      resolve({ code, json, stdout, stderr })
    })
  })

describe("operator CLI against a running gateway (embedded: through its admin API; Postgres: directly)", () => {
  let gw: TestGateway
  let env: Record<string, string>
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pr-cli-"))
    gw = await startTestGateway({ DATA_DIR: dataDir })
    env = { DATA_DIR: dataDir, ...(gw.env.DATABASE_URL ? { DATABASE_URL: gw.env.DATABASE_URL } : {}) }
  })
  afterAll(() => gw.close())

  it("creates an organisation, a portal token and credits the wallet, printing one JSON object each", async () => {
    const org = await cli(["org", "create", "--name", "acme"], env)
    expect(org.code).toBe(0)
    expect(org.json.org_id).toMatch(/^org_/)
    const token = await cli(["portal-token", "create", "--org", org.json.org_id, "--abilities", "ability:billing.read"], env)
    expect(token.code).toBe(0)
    expect(token.json.token).toMatch(/^spt_[a-z2-7]{52}$/)
    expect(token.json.abilities).toEqual(["ability:billing.read"])
    const credit = await cli(["wallet", "credit", "--org", org.json.org_id, "--usd", "12.5"], env)
    expect(credit.code).toBe(0)
    expect(credit.json).toEqual({ org_id: org.json.org_id, balance_micros: 12_500_000 })
    // the token works against the gateway, and sees the credit
    const balance = await fetch(`${gw.url}/api/v1/billing/balance`, { headers: { authorization: `Bearer ${token.json.token}` } })
    expect(await balance.json()).toEqual({ balance_micros: 12_500_000, balance_usd: "12.500000" })
    const ledger = await cli(["ledger", "check"], env)
    expect(ledger.json).toEqual({
      ok: true,
      mismatches: [],
      usage_without_receipt: { count: 0, records: [] },
      receipts_without_usage: { count: 0, receipts: [] }
    })
  }, 120_000)

  it("mail outbox shows a newcomer's verification link kept by a development gateway (no SMTP_URL), newest first", async () => {
    const signUp = (email: string) =>
      fetch(`${gw.url}/api/v1/accounts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "long enough password" }) })
    expect((await signUp("newcomer@example.org")).status).toBe(201)
    expect((await signUp("someone-else@example.org")).status).toBe(201)
    const mine = await cli(["mail", "outbox", "--to", "Newcomer@example.org", "--limit", "5"], env)
    expect(mine.code).toBe(0)
    expect(mine.json.transport).toBe("dev-outbox")
    expect(mine.json.mails).toHaveLength(1)
    expect(mine.json.mails[0]).toMatchObject({ to: "newcomer@example.org", subject: expect.any(String) })
    const link = /(http\S+\/api\/v1\/account\/verify\?token=[A-Za-z0-9_-]+)/.exec(mine.json.mails[0].text)![1]
    // The link it shows is the real one: it verifies the account.
    expect((await fetch(new URL(new URL(link).pathname + new URL(link).search, gw.url))).status).toBe(200)
    const all = await cli(["mail", "outbox"], env)
    expect(all.json.mails.map((m: { to: string }) => m.to).slice(0, 2)).toEqual(["someone-else@example.org", "newcomer@example.org"])
    const bad = await cli(["mail", "outbox", "--limit", "0"], env)
    expect(bad.code).not.toBe(0)
    expect(bad.json.error.code).toBe("invalid_request")
  }, 120_000)

  it("account operator grant/revoke sets the flag that gives a person's portal sessions ability:admin, audited", async () => {
    const email = "op@example.org"
    const signUp = await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "long enough password" }) })
    expect(signUp.status).toBe(201)
    const unverified = await cli(["account", "operator", "grant", "--email", email], env)
    expect(unverified.code).toBe(1)
    expect(unverified.json.error.code).toBe("email_not_verified")
    await gw.query("UPDATE accounts SET email_verified = true WHERE email = $1", email)
    const granted = await cli(["account", "operator", "grant", "--email", email], env)
    expect(granted.code).toBe(0)
    expect(granted.json).toMatchObject({ account_id: expect.stringMatching(/^acct_/), operator: true, changed: true })
    const login = await fetch(`${gw.url}/api/v1/portal/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "long enough password" }) })
    expect((await login.json()).abilities).toContain("ability:admin")
    const revoked = await cli(["account", "operator", "revoke", "--email", email], env)
    expect(revoked.json).toMatchObject({ operator: false, changed: true })
    expect(await gw.query("SELECT action FROM audit_log WHERE target = $1 AND action LIKE 'account.operator%' ORDER BY id", granted.json.account_id))
      .toEqual([{ action: "account.operator_granted" }, { action: "account.operator_revoked" }])
  }, 120_000)

  it("receipts keys list and rotate: the new key is current for the gateway at once, the old one retired and still published", async () => {
    const before = await cli(["receipts", "keys", "list"], env)
    expect(before.code).toBe(0)
    const nextQuarter = nextPeriodStart(parseRotationSchedule("quarterly"), Date.now())!
    expect(before.json).toMatchObject({ schedule: "quarterly", next_rotation_at: new Date(nextQuarter).toISOString() })
    const current = before.json.keys[0]
    expect(current).toMatchObject({ status: "current", trigger: "initial", source: "generated", retired_at: null, period: null })
    expect(JSON.stringify(before.json)).not.toMatch(/"d"|private/)
    const rotated = await cli(["receipts", "keys", "rotate"], env)
    expect(rotated.code).toBe(0)
    expect(rotated.json).toEqual({
      kid: expect.any(String),
      previous_kid: current.kid,
      trigger: "manual",
      period: null,
      activated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })
    const after = await cli(["receipts", "keys", "list"], env)
    expect(after.json.keys.slice(0, 2)).toEqual([
      { kid: rotated.json.kid, status: "current", trigger: "manual", source: "generated", activated_at: rotated.json.activated_at, retired_at: null, period: null },
      { ...current, status: "retired", retired_at: expect.any(String) }
    ])
    const jwks = await (await fetch(`${gw.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
    expect(jwks.keys.map((k: { kid: string }) => k.kid).slice(0, 2)).toEqual([rotated.json.kid, current.kid])
    const pem = await fetch(`${gw.url}/api/.well-known/service-receipt-pubkey.pem`)
    expect(pem.headers.get("x-service-receipt-kid")).toBe(rotated.json.kid)
  }, 120_000)

  it("fails with a JSON error and a non-zero status on bad input or an unknown command", async () => {
    const bad = await cli(["wallet", "credit", "--org", "org_nope", "--usd", "-3"], env)
    expect(bad.code).not.toBe(0)
    expect(bad.json.error.code).toBe("invalid_request")
    const unknown = await cli(["frobnicate"], env)
    expect(unknown.code).not.toBe(0)
    expect(unknown.json.error.code).toBe("unknown_command")
    expect(unknown.json.error.message).toBe('Unknown command "frobnicate"; run "node programs/cli.ts --help" for the list.')
    expect(unknown.json.error.commands).toContain("ledger check")
    expect(unknown.stdout.trim().split("\n")).toHaveLength(1)
    const unknownTopic = await cli(["help", "frobnicate"], env)
    expect(unknownTopic.code).toBe(1)
    expect(unknownTopic.json.error.code).toBe("unknown_command")
  }, 120_000)

  it("sso idp: secrets and metadata come from files, a secret on the command line is refused before anything runs", async () => {
    const org = await cli(["org", "create", "--name", "sso-cli"], env)
    const dir = mkdtempSync(join(tmpdir(), "pr-cli-sso-"))
    const metadata = join(dir, "idp-metadata.xml")
    writeFileSync(metadata, idpMetadataXml("https://idp.example.com/saml", "https://idp.example.com/sso"))
    const set = await cli(["sso", "idp", "set-saml", "--org", org.json.org_id, "--metadata-file", metadata, "--domains", "example.com", "--jit-role", "admin"], env)
    expect(set.code).toBe(0)
    expect(set.json).toMatchObject({ org_id: org.json.org_id, protocol: "saml", entity_id: "https://idp.example.com/saml", certificates: 1, jit_role: "admin" })
    const shown = await cli(["sso", "idp", "show", "--org", org.json.org_id], env)
    expect(shown.json).toEqual(set.json)
    const onArgv = await cli(["sso", "idp", "set-oidc", "--org", org.json.org_id, "--issuer", "https://idp.example.com", "--client-id", "x", "--client-secret", "s3cret-on-argv", "--domains", "example.com"], env)
    expect(onArgv.code).toBe(1)
    expect(onArgv.json.error.code).toBe("invalid_request")
    expect(onArgv.json.error.message).toContain("--client-secret-file")
    expect(onArgv.stdout).not.toContain("s3cret-on-argv")
    const missing = await cli(["sso", "idp", "set-oidc", "--org", org.json.org_id, "--client-secret-file", join(dir, "absent"), "--domains", "example.com"], env)
    expect(missing.code).toBe(1)
    expect(missing.json.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("ENOENT") })
    // Nothing changed by the refusals.
    expect((await cli(["sso", "idp", "show", "--org", org.json.org_id], env)).json).toEqual(set.json)
  }, 120_000)

  it("kek rotate never goes through the admin API: embedded, it asks to stop the gateway; on PostgreSQL it needs KEK_PREVIOUS_FILE", async () => {
    const rotate = await cli(["kek", "rotate"], env)
    expect(rotate.code).toBe(1)
    expect(rotate.stdout.trim().split("\n")).toHaveLength(1)
    if (env.DATABASE_URL === undefined) {
      expect(rotate.json.error.code).toBe("gateway_running")
      expect(rotate.json.error.message).toMatch(/stop it, run the command, start it again/)
    } else {
      expect(rotate.json.error.code).toBe("kek_previous_missing")
    }
  }, 120_000)

  it("is quiet on stderr when it asks the running gateway; says so when it connects to PostgreSQL itself", async () => {
    const ledger = await cli(["ledger", "check"], env)
    expect(ledger.code).toBe(0)
    expect(ledger.json.ok).toBe(true)
    expect(ledger.stderr).toBe(
      env.DATABASE_URL === undefined ? "" : "privacy-relay cli: connecting to PostgreSQL (DATABASE_URL) (this takes a few seconds)...\n"
    )
  }, 120_000)
})

describe("operator CLI against the gateway program: SCIM tokens without stopping it (embedded: its admin API)", () => {
  let storage: TestStorage
  let dataDir: string
  let env: Record<string, string>
  let gateway: GatewayProcess
  beforeAll(async () => {
    storage = await createTestStorage()
    dataDir = mkdtempSync(join(tmpdir(), "pr-cli-scim-"))
    env = { ...storage.env, DATA_DIR: dataDir }
    gateway = await startGatewayProcess({ ...env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", TRACE_SAMPLE_RATIO: "0" })
  }, 180_000)
  afterAll(async () => {
    await stopGatewayProcess(gateway)
    await storage?.drop()
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  })

  const scimUsers = (token: string) => fetch(`${gateway.url}/scim/v2/Users`, { headers: { authorization: `Bearer ${token}` } })

  it("issues a token the running gateway accepts at once, lists it without the token, revokes it: the gateway keeps running", async () => {
    const pid = gateway.child.pid
    const org = await cli(["org", "create", "--name", "Provisioned by CLI"], env)
    expect(org.code).toBe(0)
    const issued = await cli(["sso", "scim-token", "issue", "--org", org.json.org_id], env)
    expect(issued.code).toBe(0)
    expect(issued.json).toEqual({ token_id: expect.stringMatching(/^sct_/), token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43}$/), org_id: org.json.org_id, scim_base_url: "PUBLIC_BASE_URL/scim/v2" })
    // Embedded: it asked the gateway (quiet on stderr) instead of refusing with gateway_running; PostgreSQL: directly.
    expect(issued.stderr).toBe(env.DATABASE_URL === undefined ? "" : "privacy-relay cli: connecting to PostgreSQL (DATABASE_URL) (this takes a few seconds)...\n")

    const used = await scimUsers(issued.json.token)
    expect(used.status).toBe(200)
    expect((await used.json()).totalResults).toBe(0)

    const list = await cli(["sso", "scim-token", "list", "--org", org.json.org_id], env)
    expect(list.code).toBe(0)
    expect(list.json).toEqual({
      org_id: org.json.org_id,
      tokens: [{ token_id: issued.json.token_id, prefix: issued.json.token.slice(0, 12), created_at: expect.any(String), last_used_at: expect.any(String), revoked_at: null }]
    })
    expect(list.stdout).not.toContain(issued.json.token)

    const revoked = await cli(["sso", "scim-token", "revoke", "--org", org.json.org_id, "--id", issued.json.token_id], env)
    expect(revoked.code).toBe(0)
    expect(revoked.json).toEqual({ token_id: issued.json.token_id, org_id: org.json.org_id, revoked: true })
    const refused = await scimUsers(issued.json.token)
    expect(refused.status).toBe(401)
    expect((await refused.json()).status).toBe("401")

    const missingId = await cli(["sso", "scim-token", "revoke", "--org", org.json.org_id], env)
    expect(missingId.code).toBe(1)
    expect(missingId.json.error).toMatchObject({ code: "invalid_request" })

    // The same gateway process served every step, and never wrote the token to its log.
    expect(gateway.child.exitCode).toBeNull()
    expect(gateway.child.pid).toBe(pid)
    expect(gateway.output()).not.toContain(issued.json.token)
  }, 180_000)
})

describe("operator CLI help", () => {
  const commands = ["org create", "portal-token create", "wallet credit", "key revoke", "licence create", "oidc client create", "receipts keys rotate", "receipts keys list", "kek rotate", "mail outbox", "ledger check", "account operator grant", "account operator revoke", "sso idp set-oidc", "sso idp set-saml", "sso idp show", "sso idp remove", "sso scim-token issue", "sso scim-token list", "sso scim-token revoke"]

  it("--help, -h and help print the command list as plain text on stdout and exit 0", async () => {
    for (const args of [["--help"], ["-h"], ["help"]]) {
      const help = await cli(args, {})
      expect(help.code, args.join(" ")).toBe(0)
      expect(help.json).toBeUndefined() // not JSON
      expect(help.stderr).toBe("")
      expect(help.stdout).toContain("Usage: node programs/cli.ts <command> [--flag value ...]")
      for (const name of commands) expect(help.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"))
      expect(help.stdout).not.toContain("\\n")
    }
  }, 120_000)

  it("help <command> and <command> --help print that command's usage, what it does and what it prints", async () => {
    for (const name of commands) {
      for (const args of [["help", ...name.split(" ")], [...name.split(" "), "--help"]]) {
        const help = await cli(args, {})
        expect(help.code, args.join(" ")).toBe(0)
        expect(help.stdout.split("\n")[0]).toMatch(new RegExp(`^node programs/cli\\.ts ${name}`))
        expect(help.stdout).toContain("Prints {")
      }
    }
    // Flags beside --help do not run the command.
    const credit = await cli(["wallet", "credit", "--usd", "5", "--help"], {})
    expect(credit.code).toBe(0)
    expect(credit.stdout).toContain("--key-prefix svc_xxxxxx")
  }, 180_000)

  it("loads only light modules up front: Effect and the gateway are imported when a command opens storage itself", () => {
    const source = readFileSync(join(import.meta.dirname, "../../programs/cli.ts"), "utf8")
    const eager = [...source.matchAll(/^import (?!type )[^\n]*? from "([^"]+)"/gm)].map((m) => m[1])
    expect(eager.sort()).toEqual(["../src/config/gatewayConfig.ts", "node:fs", "node:path"])
    // The settings modules (the schema, its parsers, the ~ expansion of paths), all the way down, import only Node
    // built-ins and each other: no package, so no `effect`.
    const graph = new Set<string>()
    const walk = (file: string) => {
      if (graph.has(file)) return
      graph.add(file)
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/^import (?!type )[^\n]*? from "([^"]+)"/gm)) {
        if (spec!.startsWith("node:")) continue
        expect(spec, `${file} imports a package`).toMatch(/^\.\.?\//)
        walk(join(dirname(file), spec!))
      }
    }
    walk(join(import.meta.dirname, "../../src/config/gatewayConfig.ts"))
    expect([...graph].map((f) => relative(join(import.meta.dirname, "../.."), f))).toContain("src/config/gatewaySettings.ts")
  })
})

describe("operator CLI with no gateway running (opens embedded storage itself)", () => {
  it("works on a data directory no process holds", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pr-cli-direct-"))
    const org = await cli(["org", "create", "--name", "solo"], { DATA_DIR: dataDir })
    expect(org.code).toBe(0)
    expect(org.json.org_id).toMatch(/^org_/)
    // The slow path says what it is doing on stderr (stdout stays one JSON object).
    expect(org.stderr).toBe(`privacy-relay cli: no running gateway found for DATA_DIR ${dataDir}; opening the embedded database itself (this takes a few seconds)...\n`)
    expect(org.stdout.trim().split("\n")).toHaveLength(1)
    const again = await cli(["wallet", "credit", "--org", org.json.org_id, "--usd", "1"], { DATA_DIR: dataDir })
    expect(again.json).toEqual({ org_id: org.json.org_id, balance_micros: 1_000_000 })
  }, 180_000)

  it("kek rotate moves a data directory from its generated KEK to KEK_FILE's; a second run rewrites nothing", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pr-cli-kek-"))
    // A first command creates the database, its receipt key and OpenID keys, sealed under the generated DATA_DIR/kek.
    expect((await cli(["org", "create", "--name", "kek"], { DATA_DIR: dataDir })).code).toBe(0)
    const newKek = join(dataDir, "kek-new")
    writeFileSync(newKek, "5a".repeat(32), { mode: 0o600 })
    const wrongKek = join(dataDir, "kek-wrong")
    writeFileSync(wrongKek, "6b".repeat(32), { mode: 0o600 })
    const wrong = await cli(["kek", "rotate"], { DATA_DIR: dataDir, KEK_FILE: newKek, KEK_PREVIOUS_FILE: wrongKek })
    expect(wrong.code).toBe(1)
    expect(wrong.json.error.code).toBe("kek_unreadable")
    expect(wrong.json.error.message).toMatch(/^3 stored value\(s\) open under neither .* Nothing was changed\.$/)
    expect(wrong.json.error.details.unreadable).toEqual({ receipt_signing_keys: 1, oidc_signing_keys: 2 })
    expect(wrong.json.error.details.examples[0]).toMatch(/^receipt_signing_keys\(/)
    const rotating = { DATA_DIR: dataDir, KEK_FILE: newKek, KEK_PREVIOUS_FILE: join(dataDir, "kek") }
    const first = await cli(["kek", "rotate"], rotating)
    expect(first.code).toBe(0)
    expect(first.stdout.trim().split("\n")).toHaveLength(1)
    expect(first.json.kek).toMatch(/^[A-Za-z0-9_-]{8}$/)
    expect(first.json.tables.receipt_signing_keys).toEqual({ values: 1, already_current: 0, rewritten: 1, changed_meanwhile: 0 })
    expect(first.json.tables.oidc_signing_keys).toEqual({ values: 2, already_current: 0, rewritten: 2, changed_meanwhile: 0 })
    expect(first.json.rewritten).toBe(3)
    expect(first.stderr).toContain("kek rotate: check receipt_signing_keys: 1 value(s) seen\n")
    expect(first.stderr).toContain("kek rotate: rewrite oidc_signing_keys: 2 value(s) seen, 2 rewritten\n")
    const second = await cli(["kek", "rotate"], rotating)
    expect(second.json.rewritten).toBe(0)
    expect(second.json.tables.oidc_signing_keys).toEqual({ values: 2, already_current: 2, rewritten: 0, changed_meanwhile: 0 })
    // That only the new key is needed afterwards (services start, values open): test/layers/pg/KekRotation.test.ts.
  }, 180_000)
})
