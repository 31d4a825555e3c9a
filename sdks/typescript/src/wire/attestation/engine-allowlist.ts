// The gateway's list of official client tokeniser engines (X-Service-Engine: <id>/<semver>).
// A request naming no engine, an unknown one or one older than its minimum is `403 engine_untrusted`.
import { compareSemVer, parseSemVer } from "./semver.ts"

export type EngineAllowlist = ReadonlyArray<{
  /** Official ids are `relay-<language>`, e.g. `relay-ts`. */
  readonly id: string
  /** Lowest accepted version (semver). */
  readonly minVersion: string
  /** When present and non-empty, the attested engine.sha256 must be one of these. */
  readonly sha256?: ReadonlyArray<string>
}>

/**
 * The TypeScript engine (`relay-ts`), the Python one (`relay-py`, sdks/python), the Rust engine (`relay-rs`,
 * sdks/rust) and the SDKs bound to it through its C ABI (`relay-go`, `relay-java`, `relay-php`, `relay-rb`), each
 * from its first release (docs/relay.md).
 */
export const DEFAULT_ENGINE_ALLOWLIST: EngineAllowlist = [
  { id: "relay-ts", minVersion: "0.1.0" },
  { id: "relay-py", minVersion: "0.1.0" },
  { id: "relay-rs", minVersion: "0.1.0" },
  { id: "relay-go", minVersion: "0.1.0" },
  { id: "relay-java", minVersion: "0.1.0" },
  { id: "relay-php", minVersion: "0.1.0" },
  { id: "relay-rb", minVersion: "0.1.0" }
]

export interface EngineHeader {
  readonly id: string
  readonly version: string
}

const ENGINE_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/

/** The X-Service-Engine value for an engine. */
export const engineHeaderValue = (engine: { readonly id: string; readonly version: string }): string =>
  `${engine.id}/${engine.version}`

/** Parses `<id>/<semver>`; undefined when the value is not of that form. */
export const parseEngineHeader = (value: string): EngineHeader | undefined => {
  const slash = value.indexOf("/")
  if (slash < 0) return undefined
  const id = value.slice(0, slash)
  const version = value.slice(slash + 1)
  if (!ENGINE_ID_PATTERN.test(id) || parseSemVer(version) === undefined) return undefined
  return { id, version }
}

export type EngineAllowlistDecision =
  | { readonly ok: true; readonly engine: EngineHeader; readonly entry: EngineAllowlist[number] }
  | { readonly ok: false; readonly message: string }

/** Decides whether the X-Service-Engine header names an allowed engine at an allowed version. */
export const checkEngineAllowlist = (
  headerValue: string | undefined,
  allowlist: EngineAllowlist
): EngineAllowlistDecision => {
  const trimmed = headerValue?.trim()
  if (trimmed === undefined || trimmed === "") {
    return { ok: false, message: "X-Service-Engine header is missing: name an official client tokeniser engine" }
  }
  const engine = parseEngineHeader(trimmed)
  if (engine === undefined) {
    return { ok: false, message: "X-Service-Engine header must have the form <engine-id>/<semver>" }
  }
  const entry = allowlist.find((candidate) => candidate.id === engine.id)
  if (entry === undefined) {
    return { ok: false, message: `engine ${engine.id} is not an official client tokeniser engine` }
  }
  const minimum = parseSemVer(entry.minVersion)
  // A misconfigured minimum fails closed rather than letting every version through.
  if (minimum === undefined || compareSemVer(parseSemVer(engine.version)!, minimum) < 0) {
    return { ok: false, message: `engine ${engine.id} ${engine.version} is older than the minimum ${entry.minVersion}` }
  }
  return { ok: true, engine, entry }
}
