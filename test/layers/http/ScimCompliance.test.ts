import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gatewayServicesLayer } from "../../../layers/GatewayLive.ts"
import { createTestStorage, type TestStorage } from "../../support/databases.ts"
import { type GatewayProcess, startGatewayProcess, stopGatewayProcess } from "../../support/gatewayProcess.ts"

/**
 * The gateway's /scim/v2 checked by a published SCIM 2.0 compliance checker, python-scim's scim2-tester (with its
 * scim2-client over HTTP), against the gateway program as a separate process. The operator's path is the real one:
 * `cli.ts org create` and `cli.ts sso scim-token issue` before the gateway starts. The checker discovers the schemas,
 * then creates, reads, lists, searches, replaces, patches (add/replace/remove of every attribute) and deletes Users
 * and Groups with generated values.
 */
const REPO = join(import.meta.dirname, "../../..")
const HERE = join(import.meta.dirname, "scimCompliance")
/** Kept between runs (.tmp/ is ignored by git): created and filled from PyPI with the pinned requirements once. */
const VENV = join(REPO, ".tmp", "scim2-tester-venv")
const PYTHON = join(VENV, "bin", "python")

const ensureChecker = () => {
  const requirements = readFileSync(join(HERE, "requirements.txt"), "utf8")
  const stamp = join(VENV, "requirements.txt")
  if (existsSync(PYTHON) && existsSync(stamp) && readFileSync(stamp, "utf8") === requirements) return
  rmSync(VENV, { recursive: true, force: true })
  const run = (cmd: string, args: Array<string>) => {
    const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 600_000 })
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr || r.stdout}`)
  }
  run("python3", ["-m", "venv", VENV])
  run(join(VENV, "bin", "pip"), ["install", "--quiet", "--disable-pip-version-check", "-r", join(HERE, "requirements.txt")])
  spawnSync("cp", [join(HERE, "requirements.txt"), stamp])
}

const cli = (env: Record<string, string>, args: Array<string>) => {
  const r = spawnSync(process.execPath, [join(REPO, "programs/cli.ts"), ...args], { cwd: REPO, env: { ...process.env, ...env, LOG_LEVEL: "error" }, encoding: "utf8", timeout: 180_000 })
  if (r.status !== 0) throw new Error(`cli ${args.join(" ")} failed: ${r.stdout} ${r.stderr}`)
  return JSON.parse(r.stdout) as Record<string, string>
}

interface CheckResult {
  readonly status: string
  readonly title: string
  readonly reason: string | null
  readonly resource_type: string | null
}

/** Runs the checker; the token goes on its standard input, never on a command line. */
const runChecker = (url: string, token: string) =>
  new Promise<Array<CheckResult>>((resolve, reject) => {
    const child = spawn(PYTHON, [join(HERE, "check_server.py")], { env: { ...process.env, SCIM_URL: `${url}/scim/v2` }, stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (c) => (out += c))
    child.stderr.on("data", (c) => (err += c))
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`checker exited ${code}: ${err}`))
      resolve(out.trim().split("\n").map((line) => JSON.parse(line) as CheckResult))
    })
    child.stdin.end(token + "\n")
  })

let storage: TestStorage
let dataDir: string
let env: Record<string, string>
let gateway: GatewayProcess | undefined
let results: Array<CheckResult>
let tokenId: string

beforeAll(async () => {
  ensureChecker()
  storage = await createTestStorage()
  dataDir = mkdtempSync(join(tmpdir(), "pr-scim-"))
  env = { ...storage.env, DATA_DIR: dataDir, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", TRACE_SAMPLE_RATIO: "0" }
  const org = cli(env, ["org", "create", "--name", "Compliance Inc"])
  const issued = cli(env, ["sso", "scim-token", "issue", "--org", org.org_id])
  expect(issued.token).toMatch(/^scim_/)
  tokenId = issued.token_id
  gateway = await startGatewayProcess(env)
  results = await runChecker(gateway.url, issued.token)
}, 900_000)

afterAll(async () => {
  await stopGatewayProcess(gateway)
  await storage?.drop()
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

describe("SCIM compliance (scim2-tester against the gateway program)", () => {
  it("passes every check the checker runs; the only ones skipped are searches across resource types (not offered)", () => {
    const failed = results.filter((r) => !["SUCCESS", "COMPLIANT", "ACCEPTABLE", "SKIPPED"].includes(r.status))
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([])
    const skipped = results.filter((r) => r.status === "SKIPPED")
    expect(skipped.map((r) => r.title).sort()).toEqual(["search_with_attributes", "search_with_attributes"])
    expect(results.filter((r) => r.status === "SUCCESS").length).toBeGreaterThanOrEqual(60)
  })

  it("exercised create, read, list, replace, patch and delete of both Users and Groups", () => {
    for (const resourceType of ["User", "Group"]) {
      const titles = new Set(results.filter((r) => r.resource_type === resourceType && r.status === "SUCCESS").map((r) => r.title))
      for (const title of ["object_creation", "object_query", "object_list_with_attributes", "object_replacement", "object_deletion", "check_add_attribute", "check_replace_attribute", "check_remove_attribute"]) {
        expect(titles, `${resourceType} ${title}`).toContain(title)
      }
    }
  })

  it("recorded each change in the audit log under the token, and left no person behind once the checker deleted them", async () => {
    await stopGatewayProcess(gateway)
    const runtime = ManagedRuntime.make(gatewayServicesLayer({ ...env, LOG_LEVEL: "error" }) as Layer.Layer<any, any, never>)
    try {
      const [actions, leftUsers] = await runtime.runPromise(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const actions = yield* sql<{ action: string }>`SELECT DISTINCT action FROM audit_log WHERE actor = ${`scim:${tokenId}`}`
        const left = yield* sql<{ n: number | string }>`SELECT count(*) AS n FROM scim_users`
        return [actions.map((a) => a.action).sort(), Number(left[0].n)] as const
      }) as Effect.Effect<readonly [Array<string>, number], never, never>)
      expect(actions).toEqual(expect.arrayContaining(["scim.group_created", "scim.group_deleted", "scim.group_updated", "scim.user_created", "scim.user_deleted", "scim.user_updated"]))
      // Every User the checker created it also deleted: deletion really removes them.
      expect(leftUsers).toBe(0)
    } finally {
      await runtime.dispose()
    }
  }, 180_000)
})
