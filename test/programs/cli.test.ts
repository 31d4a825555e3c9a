import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"

/** Runs `node programs/cli.ts ...` as an operator would; secrets only via env and files. */
const cli = (args: Array<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; json: any; stdout: string }>((resolve) => {
    const child = spawn(process.execPath, ["programs/cli.ts", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "error", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout.on("data", (c) => (stdout += c))
    child.on("close", (code) => {
      let json: any
      try {
        json = JSON.parse(stdout.trim().split("\n").at(-1) ?? "")
      } catch {
        json = undefined
      }
      resolve({ code, json, stdout })
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

  it("fails with a JSON error and a non-zero status on bad input or an unknown command", async () => {
    const bad = await cli(["wallet", "credit", "--org", "org_nope", "--usd", "-3"], env)
    expect(bad.code).not.toBe(0)
    expect(bad.json.error.code).toBe("invalid_request")
    const unknown = await cli(["frobnicate"], env)
    expect(unknown.code).not.toBe(0)
    expect(unknown.json.error.code).toBe("unknown_command")
  }, 120_000)
})

describe("operator CLI with no gateway running (opens embedded storage itself)", () => {
  it("works on a data directory no process holds", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pr-cli-direct-"))
    const org = await cli(["org", "create", "--name", "solo"], { DATA_DIR: dataDir })
    expect(org.code).toBe(0)
    expect(org.json.org_id).toMatch(/^org_/)
    const again = await cli(["wallet", "credit", "--org", org.json.org_id, "--usd", "1"], { DATA_DIR: dataDir })
    expect(again.json).toEqual({ org_id: org.json.org_id, balance_micros: 1_000_000 })
  }, 180_000)
})
