// Issue 32 item 13: operations docs that disagreed with the code, found by running several gateway processes behind
// the shipped nginx configuration and killing one. Each statement is checked against what the code does.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ISSUANCE_LIMITS } from "../../layers/http/SelfServiceRoutes.ts"

const ROOT = join(import.meta.dirname, "../..")
const read = (path: string) => readFileSync(join(ROOT, path), "utf8")
/** Markdown with its line breaks folded, so a sentence can be searched whole. */
const prose = (path: string) => read(path).replace(/\s*\n\s*/g, " ")

describe("operations docs say what the code does", () => {
  it("gateway_settlement_open_holds comes from the admission counters (Redis or memory), not from the database", () => {
    const metrics = read("layers/http/MetricsRoutes.ts")
    expect(metrics).toContain("counters.openHolds")
    expect(metrics).not.toMatch(/FROM wallet_holds/)
    const doc = prose("docs/configuration.md")
    expect(doc).not.toMatch(/gauges read from the database at scrape time: `gateway_settlement_open_holds`/)
    expect(doc).toContain("`gateway_settlement_open_holds` (calls admitted and not yet settled), read at scrape time from the relay admission's counters")
  })

  it("the shipped nginx.conf sets no fixed pid file, and the docs say where its includes go on a plain host", () => {
    const conf = read("deploy/nginx/nginx.conf")
    expect(conf).not.toMatch(/^\s*pid\s/m)
    for (const include of conf.matchAll(/include (\/etc\/nginx\/privacy-relay\/\S+);/g)) {
      expect(read(`deploy/nginx/${include[1]!.split("/").at(-1)}`).length).toBeGreaterThan(0)
    }
    const doc = read("docs/deployment.md")
    expect(doc).toContain("sudo mkdir -p /etc/nginx/privacy-relay")
    expect(doc).toContain("sudo cp deploy/nginx/upstream.conf deploy/nginx/privacy-relay.conf /etc/nginx/privacy-relay/")
    expect(prose("docs/deployment.md")).toContain("-g 'pid /srv/nginx-b/nginx.pid;'")
  })

  it("the self-service issuance limit is in the keys docs, with the numbers the code enforces", () => {
    expect(ISSUANCE_LIMITS).toEqual({ perHour: 5, perDay: 20 })
    expect(prose("docs/keys.md")).toContain(`at most **${ISSUANCE_LIMITS.perHour} per hour and ${ISSUANCE_LIMITS.perDay} per day per network**`)
    expect(read("docs/configuration.md")).toContain("docs/keys.md, Self-service keys")
  })

  it("deployment.md says that calls just after a node died can get nginx 502s, and what a client does", () => {
    const doc = prose("docs/deployment.md")
    expect(doc).toContain("calls started up to a few hundred milliseconds after the kill")
    expect(doc).toContain("retry a 502 (or a connection error) with the same `Idempotency-Key` it sent the first time")
  })
})
