import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { type GatewayProcess, startGatewayProcess, stopGatewayProcess } from "../support/gatewayProcess.ts"

const SCRIPT = join(import.meta.dirname, "../../deploy/make-secrets.sh")

describe("deploy/make-secrets.sh", () => {
  const dir = mkdtempSync(join(tmpdir(), "pr-secrets-"))
  let storage: TestStorage
  let gateway: GatewayProcess
  beforeAll(async () => {
    const run = spawnSync("sh", [SCRIPT, dir], { encoding: "utf8" })
    expect(run.status, run.stderr).toBe(0)
    storage = await createTestStorage()
    gateway = await startGatewayProcess({
      ...storage.env,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      KEK_FILE: join(dir, "kek"),
      LICENCE_SIGNING_KEY_FILE: join(dir, "licence-signing-key.json"),
      METRICS_TOKEN_FILE: join(dir, "metrics-token")
    })
  })
  afterAll(async () => {
    await stopGatewayProcess(gateway)
    await storage?.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("writes owner-only files that a gateway process starts with (KEK, licence key, metrics token), and keeps them on a second run", async () => {
    const names = ["gateway.env", "kek", "licence-signing-key.json", "metrics-token", "postgres-password"]
    for (const name of names) expect(statSync(join(dir, name)).mode & 0o777, name).toBe(0o600)
    expect(readFileSync(join(dir, "gateway.env"), "utf8")).toBe(`DATABASE_URL=postgres://privacy_relay:${readFileSync(join(dir, "postgres-password"), "utf8").trim()}@postgres:5432/privacy_relay\n`)
    expect(JSON.parse(readFileSync(join(dir, "licence-signing-key.json"), "utf8"))).toMatchObject({ kty: "EC", crv: "P-256" })
    const before = names.map((name) => readFileSync(join(dir, name), "utf8"))
    expect(spawnSync("sh", [SCRIPT, dir]).status).toBe(0)
    expect(names.map((name) => readFileSync(join(dir, name), "utf8"))).toEqual(before)

    // The gateway read the token file: the bearer of that token scrapes, nobody else does.
    const token = readFileSync(join(dir, "metrics-token"), "utf8").trim()
    const scraped = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    expect(scraped.status).toBe(200)
    expect(await scraped.text()).toContain("# TYPE gateway_http_requests_total counter")
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404)
    // The receipt signing key was created encrypted under the KEK from the file.
    const keys = await (await fetch(`${gateway.url}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
    expect(keys.keys.length).toBeGreaterThanOrEqual(1)
  })
})
