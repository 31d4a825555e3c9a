import { Cause } from "effect"
import { describe, expect, it } from "vitest"
import { describeStartupFailure } from "../../layers/StartupFailure.ts"

const settings = { host: "127.0.0.1", port: 8080, databaseUrl: "postgres://relay:secret@db.internal:6543/relay", redisUrl: "redis://:secret@cache.internal" }
const listenError = (code: string) => Object.assign(new Error(`listen ${code}: 127.0.0.1:8080`), { code })

describe("describeStartupFailure: one line an operator can act on, never a secret", () => {
  it.each([
    ["a port in use (as the server's ServeError wraps it)", Cause.fail({ _tag: "ServeError", cause: listenError("EADDRINUSE") }), "port_in_use", "port 8080 on 127.0.0.1 is already in use; set PORT"],
    ["a privileged port", Cause.fail(listenError("EACCES")), "port_forbidden", "port 8080 on 127.0.0.1 needs privileges this process lacks; set PORT above 1023"],
    ["a HOST that is not ours", Cause.fail(listenError("EADDRNOTAVAIL")), "host_unavailable", "HOST 127.0.0.1 is not an address of this machine; set HOST"],
    [
      "PostgreSQL refusing connections",
      Cause.fail({ _tag: "SqlError", message: "PgConnection: Failed to connect", cause: { _tag: "ConnectionError", cause: listenError("ECONNREFUSED") } }),
      "database_unreachable",
      "database unreachable: cannot connect to PostgreSQL at db.internal:6543 (ECONNREFUSED); check DATABASE_URL and that the server runs"
    ],
    [
      "Redis refusing connections",
      Cause.die(new Error("cannot connect to Redis at REDIS_URL: Error: Connection is closed.")),
      "redis_unreachable",
      "Redis unreachable at cache.internal:6379; check REDIS_URL and that the server runs"
    ],
    ["anything else", Cause.die(new TypeError("boom\n    at somewhere.ts:1")), "unexpected", "gateway failed to start: boom"]
  ])("%s", (_label, cause, reason, message) => {
    const failure = describeStartupFailure(cause, settings)
    expect(failure).toEqual({ reason, message })
    expect(failure.message).not.toContain("secret")
  })
})
