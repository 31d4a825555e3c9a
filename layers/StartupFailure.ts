import { Cause, Effect } from "effect"
import { createServer } from "node:net"
import type { GatewayConfig } from "../services/AppConfig.ts"

/** Why the gateway could not start, in one line an operator can act on, plus a stable reason for log queries. */
export interface StartupFailure {
  readonly reason: "invalid_setting" | "port_in_use" | "port_forbidden" | "host_unavailable" | "database_unreachable" | "redis_unreachable" | "unexpected"
  readonly message: string
}

type Settings = Pick<GatewayConfig, "host" | "port" | "databaseUrl" | "redisUrl">

/** Every error and cause in a chain (`error.cause` links, as Node, the SQL driver and our layers nest them). */
const chainOf = (error: unknown): Array<unknown> => {
  const chain: Array<unknown> = []
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 10; depth++) {
    chain.push(e)
    e = (e as { cause?: unknown }).cause
  }
  return chain
}

const field = (chain: ReadonlyArray<unknown>, name: "code" | "_tag" | "name" | "message") =>
  chain.map((e) => (typeof e === "object" && e !== null ? (e as Record<string, unknown>)[name] : undefined)).filter((v) => typeof v === "string") as Array<string>

/** host:port of a URL, never its credentials or path. */
const endpointOf = (url: string | undefined, defaultPort: string) => {
  try {
    const u = new URL(url ?? "")
    return `${u.hostname}:${u.port || defaultPort}`
  } catch {
    return "the configured address"
  }
}

const NETWORK_CODES = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET"]

/**
 * The first failure of a start-up that did not get as far as serving, described without stack traces or secrets
 * (URLs are reduced to host:port). Unknown failures keep their error's first line.
 */
export const describeStartupFailure = (cause: Cause.Cause<unknown>, settings: Settings | undefined): StartupFailure => {
  const error = cause.reasons.find(Cause.isFailReason)?.error ?? cause.reasons.find(Cause.isDieReason)?.defect
  const chain = chainOf(error)
  const codes = field(chain, "code")
  const tags = [...field(chain, "_tag"), ...field(chain, "name")]
  const messages = field(chain, "message")
  const where = settings === undefined ? "" : `port ${settings.port} on ${settings.host}`
  if (tags.includes("ConfigInvalid")) return { reason: "invalid_setting", message: `invalid setting: ${messages[0]}` }
  if (codes.includes("EADDRINUSE")) return { reason: "port_in_use", message: `${where} is already in use; set PORT` }
  if (codes.includes("EACCES")) return { reason: "port_forbidden", message: `${where} needs privileges this process lacks; set PORT above 1023` }
  if (codes.includes("EADDRNOTAVAIL")) return { reason: "host_unavailable", message: `HOST ${settings?.host} is not an address of this machine; set HOST` }
  if (tags.some((t) => t.startsWith("SqlError") || t === "ConnectionError") && settings?.databaseUrl !== undefined) {
    const why = codes.find((c) => NETWORK_CODES.includes(c)) ?? messages.at(-1) ?? "no answer"
    return {
      reason: "database_unreachable",
      message: `database unreachable: cannot connect to PostgreSQL at ${endpointOf(settings.databaseUrl, "5432")} (${why}); check DATABASE_URL and that the server runs`
    }
  }
  if (messages.some((m) => m.startsWith("cannot connect to Redis"))) {
    return { reason: "redis_unreachable", message: `Redis unreachable at ${endpointOf(settings?.redisUrl, "6379")}; check REDIS_URL and that the server runs` }
  }
  return { reason: "unexpected", message: `gateway failed to start: ${(messages[0] ?? String(error)).split("\n")[0]}` }
}

/**
 * Fails with the listen error (EADDRINUSE, EACCES, ...) when HOST:PORT cannot be bound, before storage is opened:
 * a port conflict is reported in milliseconds instead of after migrations. PORT=0 needs no check.
 */
export const ensurePortFree = (host: string, port: number) =>
  port === 0 ? Effect.void : Effect.callback<void, Error>((resume) => {
    const probe = createServer()
    probe.once("error", (error) => resume(Effect.fail(error)))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.void)))
  })
