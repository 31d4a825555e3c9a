// DATABASE_URL_FILE and REDIS_URL_FILE: the URLs embed passwords, so production mounts them as files like the
// other secrets; the parsed settings carry the file's content, and mistakes are one clear ConfigInvalid.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ConfigInvalid, parseGatewayConfig } from "../../../src/config/gatewayConfig.ts"

const dir = mkdtempSync(join(tmpdir(), "pr-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content, { mode: 0o600 })
  return path
}

describe("parseGatewayConfig: URLs from *_FILE settings", () => {
  it("reads DATABASE_URL_FILE and REDIS_URL_FILE (trimmed, a trailing newline as secret stores write it)", () => {
    const config = parseGatewayConfig({
      DATABASE_URL_FILE: file("db", "postgres://relay:s3cret@db.internal:5432/relay\n"),
      REDIS_URL_FILE: file("redis", "  redis://:s3cret@cache.internal:6379 \n")
    })
    expect(config.databaseUrl).toBe("postgres://relay:s3cret@db.internal:5432/relay")
    expect(config.redisUrl).toBe("redis://:s3cret@cache.internal:6379")
  })

  it("the plain variables still work, and neither set means embedded storage and in-process state", () => {
    expect(parseGatewayConfig({ DATABASE_URL: "postgres://a@b/c", REDIS_URL: "redis://r" })).toMatchObject({ databaseUrl: "postgres://a@b/c", redisUrl: "redis://r" })
    expect(parseGatewayConfig({})).toMatchObject({ databaseUrl: undefined, redisUrl: undefined })
  })

  it.each([
    ["both the variable and its file", { DATABASE_URL: "postgres://a@b/c", DATABASE_URL_FILE: "/nonexistent" }, "set DATABASE_URL or DATABASE_URL_FILE, not both"],
    ["a file that does not exist", { REDIS_URL_FILE: join(tmpdir(), "pr-config-missing", "redis") }, `REDIS_URL_FILE: cannot read ${join(tmpdir(), "pr-config-missing", "redis")} (ENOENT)`],
    ["an empty file", { DATABASE_URL_FILE: "EMPTY" }, "is empty"]
  ])("refuses %s with ConfigInvalid", (_label, env, message) => {
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === "EMPTY" ? file("empty", "\n") : v]))
    let thrown: unknown
    try {
      parseGatewayConfig(resolved)
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(ConfigInvalid)
    expect((thrown as Error).message).toContain(message)
    expect((thrown as Error).message).not.toContain("s3cret")
  })
})
