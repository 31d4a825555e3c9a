import { spansFromRegex, type Detector } from "./Detector.ts"

/** Full validation of a textual IPv6 address (RFC 4291 section 2.2), with optional embedded IPv4 tail. */
export const isValidIpv6 = (value: string): boolean => {
  let head = value
  let groupsAvailable = 8
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value)
  if (v4 !== null) {
    const octets = [v4[2]!, v4[3]!, v4[4]!, v4[5]!]
    if (!octets.every((o) => (o === "0" || !o.startsWith("0")) && Number(o) <= 255)) return false
    head = v4[1]!.endsWith("::") ? v4[1]! : v4[1]!.slice(0, -1)
    groupsAvailable = 6
  }
  const halves = head.split("::")
  if (halves.length > 2) return false
  const parse = (part: string): Array<string> | undefined => {
    if (part === "") return []
    const groups = part.split(":")
    return groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g)) ? groups : undefined
  }
  if (halves.length === 1) {
    const groups = parse(halves[0]!)
    return groups !== undefined && groups.length === groupsAvailable
  }
  const left = parse(halves[0]!)
  const right = parse(halves[1]!)
  return left !== undefined && right !== undefined && left.length + right.length < groupsAvailable
}

// Shape first (hex groups and colons, optional IPv4 tail), then the full parser. Times ("14:22:05")
// and MAC addresses ("00:1a:2b:3c:4d:5e") fail the parser: they have neither 8 groups nor "::".
const IPV6_CANDIDATE =
  /(?<![\p{L}\p{N}:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})(?![\p{L}\p{N}:]|\.\d)/gu

export const ipv6Detector: Detector = {
  type: "IPV6",
  detect: (text) =>
    spansFromRegex(text, IPV6_CANDIDATE, "IPV6", (m) =>
      isValidIpv6(m[0]) && /[0-9A-Fa-f]/.test(m[0]) ? { start: m.index, end: m.index + m[0].length } : undefined
    )
}
