import { spansFromRegex, type Detector } from "./Detector.ts"
import { fieldKindAt } from "./fieldKinds.ts"
import { lineAround, NETWORK_CUE } from "./ipv4.ts"

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

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/
/** A URL's bracketed host before the address ("http://[", "ssh://user@["). */
const URL_HOST_BEFORE = /:\/\/(?:[^\s@\/]*@)?\[$/
/** A bracketed host's port, a prefix length or a zone after it ("]:8080", "/64", "%eth0"). */
const PORT_PREFIX_OR_ZONE_AFTER = /^(?:\]:\d{1,5}\b|\/\d{1,3}\b|%[\p{L}\p{N}]+)/u

/**
 * A compressed address with fewer than three groups written ("::2", "1::3", "a::b") is also how code writes slices
 * ("a[::2]", "arr[1::3]") and scopes, so it counts only where the context announces an address, as IPv4 does: an ip
 * field, a network word in its line, a URL's bracketed host, a port, prefix length or zone after it. Longer
 * addresses, and any with an IPv4 tail ("::ffff:10.0.0.5"), are taken anywhere: nothing else is written that way.
 */
const announcedIfShort = (text: string, start: number, end: number): boolean => {
  const value = text.slice(start, end)
  if (/\.\d/.test(value) || value.split(":").filter((g) => HEX_GROUP.test(g)).length >= 3) return true
  if (fieldKindAt(text, start, end) === "ip") return true
  const { before, after } = lineAround(text, start, end)
  return NETWORK_CUE.test(before) || NETWORK_CUE.test(after) || URL_HOST_BEFORE.test(before) || PORT_PREFIX_OR_ZONE_AFTER.test(after)
}

export const ipv6Detector: Detector = {
  type: "IPV6",
  detect: (text) =>
    spansFromRegex(text, IPV6_CANDIDATE, "IPV6", (m) =>
      isValidIpv6(m[0]) && /[0-9A-Fa-f]/.test(m[0]) && announcedIfShort(text, m.index, m.index + m[0].length)
        ? { start: m.index, end: m.index + m[0].length }
        : undefined
    )
}
