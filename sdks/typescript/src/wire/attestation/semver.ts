// Semantic Versioning 2.0.0 parsing and precedence, just enough for the engine version gate.
// Build metadata is parsed and ignored for precedence, as the standard requires.

export interface SemVer {
  readonly major: number
  readonly minor: number
  readonly patch: number
  readonly prerelease: ReadonlyArray<string>
}

const NUMERIC = "0|[1-9]\\d*"
const PRERELEASE_ID = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)"
const SEMVER_PATTERN = new RegExp(
  `^(${NUMERIC})\\.(${NUMERIC})\\.(${NUMERIC})` +
    `(?:-(${PRERELEASE_ID}(?:\\.${PRERELEASE_ID})*))?` +
    `(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`
)

/** Parses a strict semver string (no leading `v`); undefined when it is not one. */
export const parseSemVer = (text: string): SemVer | undefined => {
  const match = SEMVER_PATTERN.exec(text)
  if (match === null) return undefined
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (!Number.isSafeInteger(major) || !Number.isSafeInteger(minor) || !Number.isSafeInteger(patch)) return undefined
  return { major, minor, patch, prerelease: match[4] === undefined ? [] : match[4].split(".") }
}

const compareIdentifiers = (a: string, b: string): number => {
  const aNumeric = /^\d+$/.test(a)
  const bNumeric = /^\d+$/.test(b)
  if (aNumeric && bNumeric) return Math.sign(Number(a) - Number(b))
  if (aNumeric) return -1 // numeric identifiers have lower precedence than alphanumeric ones
  if (bNumeric) return 1
  return a < b ? -1 : a > b ? 1 : 0
}

/** Precedence: negative when a < b, zero when equal, positive when a > b. */
export const compareSemVer = (a: SemVer, b: SemVer): number => {
  const core = Math.sign(a.major - b.major) || Math.sign(a.minor - b.minor) || Math.sign(a.patch - b.patch)
  if (core !== 0) return core
  // A version without prerelease ranks above the same version with one (1.0.0-rc.1 < 1.0.0).
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length)
  }
  const shared = Math.min(a.prerelease.length, b.prerelease.length)
  for (let i = 0; i < shared; i++) {
    const order = compareIdentifiers(a.prerelease[i]!, b.prerelease[i]!)
    if (order !== 0) return order
  }
  return Math.sign(a.prerelease.length - b.prerelease.length)
}
