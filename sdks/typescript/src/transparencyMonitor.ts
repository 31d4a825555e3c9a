/**
 * `privacy-relay transparency monitor`: checks that a gateway's receipt transparency log only ever grows. It keeps the
 * last signed tree head it saw in a file; each run fetches the current head, verifies its signature against the
 * gateway's JWKS, and proves with an RFC 9162 consistency proof that the head it kept describes a prefix of the log now.
 * A fork (two different logs for one size, or a proof that does not hold) or a rollback (a smaller log) is reported
 * with both signed heads as evidence and a non-zero exit, and the kept head is not replaced. Run it from cron or a
 * systemd timer; any number of independent monitors make a log that shows different histories to different people
 * detectable.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs"
import { gatewayUrlSetting } from "./client/clientSettings.ts"
import { parseGatewayUrl } from "./client/gatewayUrl.ts"
import { createJwksCache } from "./verify/jwks.ts"
import { ConfigInvalid, readSettings } from "./wire/config/setting.ts"
import { type SignedTreeHead, treeHeadShapeProblem, verifyConsistencyProof, verifyTreeHead } from "./wire/receipts/transparency.ts"

/** The monitor's one setting from the environment (docs/configuration.md); `--gateway` overrides it. */
export const TRANSPARENCY_SETTINGS = {
  gatewayUrl: gatewayUrlSetting()
}

export const TRANSPARENCY_HELP = `privacy-relay transparency monitor --state <file> [--gateway <url>]

Checks that the gateway's receipt transparency log only grows: fetches its signed tree head, verifies it with the
gateway's published keys, and verifies the RFC 9162 consistency proof from the head kept in <file> (written on the
first run, replaced after every good run). Prints one JSON line:
{"status","gateway","old","new","reason"} (and "evidence" with both signed heads on a fork or a rollback).

  --state <file>    where the last verified signed tree head is kept (JSON)
  --gateway <url>   the gateway (default: GATEWAY_URL); https, or http to a loopback address
  --help            this text

Status and exit code:
  first_head   0  no head was kept yet: this one is now
  unchanged    0  the same tree size and root as the kept head
  consistent   0  the log grew and the proof shows the kept head is a prefix of it
  fork         3  a different root for the kept size, or a consistency proof that does not hold
  rollback     3  the log is smaller than the kept head
  invalid      3  the gateway's head or proof does not verify (signature, other log, malformed)
  error        1  the gateway, its keys or the state file could not be read (nothing was judged)
  usage        2  bad arguments
`

export type MonitorStatus = "first_head" | "unchanged" | "consistent" | "fork" | "rollback" | "invalid" | "error" | "usage"

export interface MonitorReport {
  readonly status: MonitorStatus
  readonly gateway: string | null
  readonly old: HeadSummary | null
  readonly new: HeadSummary | null
  readonly reason: string | null
  /** On a fork or a rollback: the signed heads (and the proof) that contradict each other. */
  readonly evidence?: { readonly old_head: unknown; readonly new_head: unknown; readonly proof?: unknown }
}

interface HeadSummary {
  readonly tree_size: number
  readonly root_hash: string
  readonly timestamp: string
  readonly kid: string
}

const EXIT: Record<MonitorStatus, number> = { first_head: 0, unchanged: 0, consistent: 0, fork: 3, rollback: 3, invalid: 3, error: 1, usage: 2 }

const summary = (head: SignedTreeHead): HeadSummary => ({
  tree_size: head.tree_size,
  root_hash: head.root_hash,
  timestamp: head.timestamp,
  kid: head.kid
})

/** Thrown for what is not the log's fault: nothing was judged. */
class Unavailable extends Error {}

export interface MonitorOptions {
  readonly gatewayUrl: string
  readonly stateFile: string
  readonly fetch?: typeof globalThis.fetch
}

/** One monitoring run; never throws. */
export const monitorTransparencyLog = async (options: MonitorOptions): Promise<MonitorReport> => {
  let gateway: string | null = null
  try {
    gateway = parseGatewayUrl(options.gatewayUrl)
  } catch (e) {
    return { status: "usage", gateway: null, old: null, new: null, reason: `gateway: ${(e as Error).message}` }
  }
  const base = gateway
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  const getJson = async (path: string): Promise<unknown> => {
    let res: Response
    try {
      res = await doFetch(`${base}${path}`, { headers: { accept: "application/json" } })
    } catch (e) {
      throw new Unavailable(`the gateway could not be reached (${path}): ${(e as Error).message}`)
    }
    const text = await res.text()
    if (res.status !== 200) throw new Unavailable(`the gateway answered ${res.status} for ${path}: ${text.slice(0, 200)}`)
    try {
      return JSON.parse(text)
    } catch {
      throw new Unavailable(`the gateway did not answer JSON for ${path}`)
    }
  }

  let kept: SignedTreeHead | undefined
  try {
    let text: string | undefined
    try {
      text = readFileSync(options.stateFile, "utf8")
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new Unavailable(`the state file cannot be read: ${(e as Error).message}`)
    }
    if (text !== undefined) {
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        throw new Unavailable(`the state file ${options.stateFile} is not JSON: move it away to start over`)
      }
      const problem = treeHeadShapeProblem(parsed)
      if (problem !== null) throw new Unavailable(`the state file ${options.stateFile} does not hold a signed tree head (${problem})`)
      kept = parsed as SignedTreeHead
    }

    const jwks = createJwksCache({ gatewayUrl: base, fetch: doFetch })
    const resolveKey = async (kid: string) => {
      try {
        return await jwks.resolveKey(kid)
      } catch (e) {
        throw new Unavailable((e as Error).message)
      }
    }
    const current = await getJson("/api/v1/transparency/sth")
    const head = await verifyTreeHead(current, { resolveKey })
    if (!head.valid) {
      return { status: "invalid", gateway, old: kept === undefined ? null : summary(kept), new: null, reason: head.reason }
    }
    const now = current as SignedTreeHead
    const report = (status: MonitorStatus, reason: string | null, evidence?: MonitorReport["evidence"]): MonitorReport => ({
      status,
      gateway,
      old: kept === undefined ? null : summary(kept),
      new: summary(now),
      reason,
      ...(evidence === undefined ? {} : { evidence })
    })
    const keep = () => {
      const temporary = `${options.stateFile}.${process.pid}.tmp`
      writeFileSync(temporary, `${JSON.stringify(now)}\n`)
      renameSync(temporary, options.stateFile)
    }

    if (kept === undefined) {
      keep()
      return report("first_head", null)
    }
    if (now.iss !== kept.iss) {
      return report("invalid", `the gateway's head is of the log ${JSON.stringify(now.iss)}, the kept one of ${JSON.stringify(kept.iss)}: another gateway, or a new log`)
    }
    if (now.tree_size < kept.tree_size) {
      return report("rollback", `the log has ${now.tree_size} leaves, fewer than the ${kept.tree_size} of the kept head`, { old_head: kept, new_head: now })
    }
    if (now.tree_size === kept.tree_size) {
      if (now.root_hash === kept.root_hash) return report("unchanged", null)
      return report("fork", `two different root hashes for tree size ${now.tree_size}, both signed by the gateway`, { old_head: kept, new_head: now })
    }
    const proof = kept.tree_size === 0
      ? null
      : await getJson(`/api/v1/transparency/consistency?first=${kept.tree_size}&second=${now.tree_size}`)
    const verdict = await verifyConsistencyProof(proof, kept, { resolveKey, newHead: now })
    if (!verdict.valid) {
      const failed = verdict.checks.find((c) => c.status === "fail")!
      return failed.label === "consistency"
        ? report("fork", verdict.reason, { old_head: kept, new_head: now, proof })
        : report("invalid", verdict.reason)
    }
    keep()
    return report("consistent", null)
  } catch (e) {
    return { status: "error", gateway, old: kept === undefined ? null : summary(kept), new: null, reason: (e as Error).message }
  }
}

/** `privacy-relay transparency <subcommand>`: prints the report; answers the exit code. */
export const runTransparency = async (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  io: { readonly output: NodeJS.WritableStream; readonly errors: NodeJS.WritableStream },
  fetch?: typeof globalThis.fetch
): Promise<number> => {
  const usage = (reason: string) => {
    io.errors.write(`privacy-relay transparency: ${reason}\n\n${TRANSPARENCY_HELP}`)
    io.output.write(`${JSON.stringify({ status: "usage", gateway: null, old: null, new: null, reason } satisfies MonitorReport)}\n`)
    return EXIT.usage
  }
  const [sub, ...rest] = args
  if (sub === undefined || sub === "--help" || sub === "-h" || rest.includes("--help") || rest.includes("-h")) {
    io.output.write(TRANSPARENCY_HELP)
    return sub === undefined ? EXIT.usage : 0
  }
  if (sub !== "monitor") return usage(`unknown subcommand ${JSON.stringify(sub)}`)
  let stateFile: string | undefined
  let gatewayUrl: string | undefined
  for (let i = 0; i < rest.length; i++) {
    const value = rest[i + 1]
    if ((rest[i] === "--state" || rest[i] === "--gateway") && value !== undefined && value !== "" && !value.startsWith("--")) {
      if (rest[i] === "--state") stateFile = value
      else gatewayUrl = value
      i++
    } else {
      return usage(`unknown or incomplete argument ${JSON.stringify(rest[i])}`)
    }
  }
  if (stateFile === undefined) return usage("--state <file> is required")
  if (gatewayUrl === undefined) {
    try {
      gatewayUrl = readSettings(TRANSPARENCY_SETTINGS, env).gatewayUrl
    } catch (error) {
      if (error instanceof ConfigInvalid) return usage(`gateway: ${error.message}`)
      throw error
    }
  }
  if (gatewayUrl === undefined) return usage("--gateway <url> or GATEWAY_URL is required")
  const report = await monitorTransparencyLog({ gatewayUrl, stateFile, ...(fetch === undefined ? {} : { fetch }) })
  io.output.write(`${JSON.stringify(report)}\n`)
  return EXIT[report.status]
}
