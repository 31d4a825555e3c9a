// Node-only (node:net, node:dns). SSRF guard for webhook delivery (spec, Signature rules 5: delivery
// never targets private, reserved or metadata addresses; DNS is resolved again before each attempt).
//
// How the dispatcher uses it, per attempt: checkWebhookUrl (cheap syntactic check, also at endpoint
// creation) -> resolveAndCheck(hostname) (one lookup, every address checked) -> connect to the returned
// address with pinnedLookup, so TLS/SNI and Host still use the hostname but no second, possibly
// rebinding, DNS answer is ever used. Redirects must not be followed (fetch: redirect "manual").
import { lookup as systemLookup } from "node:dns/promises"
import { isIP, isIPv4, isIPv6, type LookupFunction } from "node:net"

export type AddressVerdict = { readonly allowed: boolean; readonly reason: string }

const allowed = (reason: string): AddressVerdict => ({ allowed: true, reason })
const refused = (reason: string): AddressVerdict => ({ allowed: false, reason })

// ---------------------------------------------------------------------------------------------
// IPv4

type V4Block = readonly [base: string, prefixLength: number, reason: string]

// Most specific first: the first block containing the address names the reason.
const V4_BLOCKS: readonly V4Block[] = [
  ["169.254.169.254", 32, "metadata"], // AWS, GCP, Azure, OpenStack instance metadata
  ["169.254.170.2", 32, "metadata"], // AWS ECS task credentials
  ["100.100.100.200", 32, "metadata"], // Alibaba Cloud metadata
  ["168.63.129.16", 32, "metadata"], // Azure wireserver: a public-looking address that is host-internal
  ["0.0.0.0", 32, "unspecified"],
  ["255.255.255.255", 32, "broadcast"],
  ["0.0.0.0", 8, "reserved"], // "this network"
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link_local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"], // IETF protocol assignments (includes Oracle metadata 192.0.0.192)
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"], // deprecated 6to4 relay anycast
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmark"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"]
]

const dottedToNumber = (dotted: string): number =>
  dotted.split(".").reduce((value, octet) => value * 256 + Number(octet), 0)

const numberToDotted = (value: number): string =>
  [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".")

const maskOf = (prefixLength: number): number => (prefixLength === 0 ? 0 : (~0 << (32 - prefixLength)) >>> 0)

const V4_RANGES = V4_BLOCKS.map(([base, prefixLength, reason]) => ({
  network: (dottedToNumber(base) & maskOf(prefixLength)) >>> 0,
  mask: maskOf(prefixLength),
  reason
}))

const classifyV4 = (value: number): AddressVerdict => {
  for (const range of V4_RANGES) {
    if (((value & range.mask) >>> 0) === range.network) return refused(range.reason)
  }
  return allowed("public")
}

// ---------------------------------------------------------------------------------------------
// IPv6

/** 16 bytes of a textual IPv6 address (already validated by isIPv6); zone id ignored. */
const ipv6ToBytes = (text: string): Uint8Array => {
  const withoutZone = text.split("%")[0]!
  const groupsOf = (part: string): number[] => {
    if (part === "") return []
    const groups: number[] = []
    for (const piece of part.split(":")) {
      if (piece.includes(".")) {
        const v4 = dottedToNumber(piece)
        groups.push(v4 >>> 16, v4 & 0xffff)
      } else {
        groups.push(parseInt(piece, 16))
      }
    }
    return groups
  }
  const [headText, tailText] = withoutZone.split("::") as [string, string | undefined]
  const head = groupsOf(headText)
  const tail = tailText === undefined ? [] : groupsOf(tailText)
  const groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail]
  const bytes = new Uint8Array(16)
  groups.forEach((group, index) => {
    bytes[index * 2] = group >>> 8
    bytes[index * 2 + 1] = group & 255
  })
  return bytes
}

const leadingBits = (bytes: Uint8Array, prefixLength: number): bigint => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return value >> BigInt(128 - prefixLength)
}

const inV6 = (bytes: Uint8Array, network: string, prefixLength: number): boolean =>
  leadingBits(bytes, prefixLength) === leadingBits(ipv6ToBytes(network), prefixLength)

const v4At = (bytes: Uint8Array, offset: number): number =>
  ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0

/** An IPv6 address that carries an IPv4 one is judged by the IPv4 address it reaches. */
const embedded = (kind: string, v4: number): AddressVerdict => {
  const inner = classifyV4(v4)
  return inner.allowed ? allowed(`${kind}:public`) : refused(`${kind}:${inner.reason}`)
}

const classifyV6 = (bytes: Uint8Array): AddressVerdict => {
  if (inV6(bytes, "::", 128)) return refused("unspecified")
  if (inV6(bytes, "::1", 128)) return refused("loopback")
  if (inV6(bytes, "::ffff:0:0", 96)) return embedded("ipv4_mapped", v4At(bytes, 12))
  // Deprecated IPv4-compatible form (::a.b.c.d): no legitimate use, so refused whatever it embeds.
  if (inV6(bytes, "::", 96)) return refused("ipv4_compatible")
  if (inV6(bytes, "64:ff9b::", 96)) return embedded("nat64", v4At(bytes, 12))
  if (inV6(bytes, "64:ff9b:1::", 48)) return refused("nat64_local")
  if (inV6(bytes, "fd00:ec2::254", 128)) return refused("metadata") // AWS IMDS over IPv6
  if (inV6(bytes, "fc00::", 7)) return refused("unique_local")
  if (inV6(bytes, "fe80::", 10)) return refused("link_local")
  if (inV6(bytes, "fec0::", 10)) return refused("site_local")
  if (inV6(bytes, "ff00::", 8)) return refused("multicast")
  if (inV6(bytes, "2002::", 16)) return embedded("6to4", v4At(bytes, 2))
  if (inV6(bytes, "2001:db8::", 32)) return refused("documentation")
  // IETF protocol assignments, including Teredo 2001::/32 whose embedded IPv4 is obfuscated.
  if (inV6(bytes, "2001::", 23)) return refused("reserved")
  if (inV6(bytes, "3fff::", 20)) return refused("documentation")
  if (inV6(bytes, "5f00::", 16)) return refused("reserved") // SRv6 SIDs
  // Only global unicast is a legitimate receiver; everything else IANA has not allocated for it.
  if (!inV6(bytes, "2000::", 3)) return refused("reserved")
  return allowed("public")
}

// ---------------------------------------------------------------------------------------------
// Host literals: the IPv4 forms WHATWG URL and inet_aton accept (decimal, hex, octal, short)

export type HostLiteral =
  | { readonly kind: "ipv4"; readonly address: string }
  | { readonly kind: "ipv6"; readonly address: string }
  | { readonly kind: "name"; readonly name: string }
  | { readonly kind: "invalid"; readonly reason: string }

/** WHATWG "IPv4 number parser": 0x.. hex, leading 0 octal, else decimal. Undefined on failure. */
const parseIpv4Number = (part: string): bigint | undefined => {
  if (part === "") return undefined
  let digits = part
  let pattern = /^[0-9]+$/
  let prefix = ""
  if (part.length >= 2 && (part.startsWith("0x") || part.startsWith("0X"))) {
    digits = part.slice(2)
    pattern = /^[0-9a-fA-F]+$/
    prefix = "0x"
  } else if (part.length >= 2 && part.startsWith("0")) {
    digits = part.slice(1)
    pattern = /^[0-7]+$/
    prefix = "0o"
  }
  if (digits === "") return 0n
  if (!pattern.test(digits)) return undefined
  return BigInt(prefix + digits)
}

/** WHATWG "ends in a number" checker: decides whether the host must be parsed as IPv4. */
const endsInANumber = (host: string): boolean => {
  const parts = host.split(".")
  if (parts[parts.length - 1] === "") {
    if (parts.length === 1) return false
    parts.pop()
  }
  const last = parts[parts.length - 1]!
  return (last !== "" && /^[0-9]+$/.test(last)) || parseIpv4Number(last) !== undefined
}

/** WHATWG IPv4 parser: 1 to 4 parts, the last filling the remaining bytes (so 127.1 = 127.0.0.1). */
const parseWhatwgIpv4 = (host: string): number | undefined => {
  const parts = host.split(".")
  if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop()
  if (parts.length > 4) return undefined
  const numbers: bigint[] = []
  for (const part of parts) {
    const value = parseIpv4Number(part)
    if (value === undefined) return undefined
    numbers.push(value)
  }
  const last = numbers.pop()!
  if (numbers.some((value) => value > 255n)) return undefined
  if (last >= 256n ** BigInt(5 - parts.length)) return undefined
  let address = last
  numbers.forEach((value, index) => {
    address += value * 256n ** BigInt(3 - index)
  })
  return Number(address)
}

const HOSTNAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/

/**
 * Reads a URL host the way the WHATWG URL parser (and inet_aton behind getaddrinfo) would, so an
 * address spelled 2130706433, 0x7f000001, 0177.0.0.1 or 127.1 is recognised as 127.0.0.1 instead
 * of slipping through as a "name". IPv6 may be bracketed. Names are lower-cased; anything that is
 * neither an address nor a plain DNS name (after punycode) is invalid.
 */
export const parseHostLiteral = (host: string): HostLiteral => {
  if (host.startsWith("[") && host.endsWith("]")) {
    const inner = host.slice(1, -1)
    return isIPv6(inner) ? { kind: "ipv6", address: inner } : { kind: "invalid", reason: "invalid_ipv6" }
  }
  if (host.includes(":")) {
    return isIPv6(host) ? { kind: "ipv6", address: host } : { kind: "invalid", reason: "invalid_host" }
  }
  const lower = host.toLowerCase()
  if (lower === "") return { kind: "invalid", reason: "empty_host" }
  if (endsInANumber(lower)) {
    const value = parseWhatwgIpv4(lower)
    return value === undefined ? { kind: "invalid", reason: "invalid_ipv4" } : { kind: "ipv4", address: numberToDotted(value) }
  }
  return HOSTNAME.test(lower) ? { kind: "name", name: lower } : { kind: "invalid", reason: "invalid_host" }
}

// ---------------------------------------------------------------------------------------------
// Classification and resolution

/**
 * Whether delivery may connect to `ip`. Accepts any spelling parseHostLiteral understands
 * (brackets, 127.1, 0x7f000001, ::ffff:7f00:1 ...). `reason` is "public" (or "<kind>:public" for an
 * allowed address embedding IPv4) when allowed, else the range that refused it, e.g. "loopback",
 * "private", "metadata", "ipv4_mapped:loopback", "nat64:private", "not_an_ip".
 */
export const classifyAddress = (ip: string): AddressVerdict => {
  const literal = parseHostLiteral(ip)
  if (literal.kind === "ipv4") return classifyV4(dottedToNumber(literal.address))
  if (literal.kind === "ipv6") return classifyV6(ipv6ToBytes(literal.address))
  return refused("not_an_ip")
}

/** Exactly 127.0.0.1 or ::1: the only addresses WEBHOOK_ALLOW_LOOPBACK=1 lets through. */
const isTestLoopback = (ip: string): boolean => {
  const literal = parseHostLiteral(ip)
  if (literal.kind === "ipv4") return literal.address === "127.0.0.1"
  if (literal.kind === "ipv6") return inV6(ipv6ToBytes(literal.address), "::1", 128)
  return false
}

const verdictFor = (ip: string, allowLoopback: boolean): AddressVerdict =>
  allowLoopback && isTestLoopback(ip) ? allowed("loopback_allowed") : classifyAddress(ip)

export type ResolvedAddress = { readonly address: string; readonly family: number }

/** Resolves a name to all its addresses; injectable for tests. */
export type LookupAll = (hostname: string) => Promise<readonly ResolvedAddress[]>

const systemLookupAll: LookupAll = (hostname) => systemLookup(hostname, { all: true, order: "verbatim" })

export type ResolveCheckOptions = {
  /** Lets exactly 127.0.0.1 and ::1 through (WEBHOOK_ALLOW_LOOPBACK=1, tests only). */
  readonly allowLoopback: boolean
  readonly lookup?: LookupAll
}

export type CheckedTarget =
  | { readonly ok: true; readonly address: string; readonly family: 4 | 6 }
  | { readonly ok: false; readonly reason: string; readonly address?: string }

/**
 * Resolves `hostname` once and checks every address it resolves to; refuses if ANY is disallowed
 * (a mixed answer is how DNS-rebinding attacks smuggle an internal address in). On success returns
 * the address to connect to: the caller must connect to exactly that address (see pinnedLookup)
 * and must call this again before each attempt, because DNS answers change.
 */
export const resolveAndCheck = async (hostname: string, options: ResolveCheckOptions): Promise<CheckedTarget> => {
  const literal = parseHostLiteral(hostname)
  if (literal.kind === "invalid") return { ok: false, reason: literal.reason }
  let candidates: readonly ResolvedAddress[]
  if (literal.kind === "ipv4" || literal.kind === "ipv6") {
    candidates = [{ address: literal.address, family: literal.kind === "ipv4" ? 4 : 6 }]
  } else {
    try {
      candidates = await (options.lookup ?? systemLookupAll)(literal.name)
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code
      return { ok: false, reason: `dns_error:${typeof code === "string" ? code : "unknown"}` }
    }
    if (candidates.length === 0) return { ok: false, reason: "dns_no_addresses" }
  }
  for (const candidate of candidates) {
    const verdict = verdictFor(candidate.address, options.allowLoopback)
    if (!verdict.allowed) return { ok: false, reason: verdict.reason, address: candidate.address }
  }
  const chosen = candidates[0]!.address
  const family = isIP(chosen)
  return { ok: true, address: chosen, family: family === 6 ? 6 : 4 }
}

/**
 * A `lookup` for node:http(s)/net/tls options that always answers the already-checked address, so
 * the request keeps the hostname for Host, SNI and certificate checks but never re-resolves it.
 */
export const pinnedLookup = (target: { readonly address: string; readonly family: 4 | 6 }): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ address: target.address, family: target.family }])
    else callback(null, target.address, target.family)
  }

export type UrlCheck = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly reason: string }

/**
 * Syntactic check of an endpoint URL, without DNS (so it can run at endpoint creation as well as
 * before each attempt). https is required in production; plain http is accepted outside production,
 * and with allowLoopback for the exact targets 127.0.0.1 / [::1] (docs/webhooks.md). Credentials in the
 * URL are refused (they would be sent to the receiver and stored in our rows). An address literal
 * is classified here already; names are checked by resolveAndCheck.
 */
export const checkWebhookUrl = (
  url: string,
  options: { readonly production: boolean; readonly allowLoopback: boolean }
): UrlCheck => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, reason: "invalid_url" }
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return { ok: false, reason: "unsupported_scheme" }
  if (parsed.username !== "" || parsed.password !== "") return { ok: false, reason: "credentials_in_url" }
  const literal = parseHostLiteral(parsed.hostname)
  if (literal.kind === "invalid") return { ok: false, reason: literal.reason }
  if (parsed.protocol === "http:") {
    const loopbackTarget = options.allowLoopback && literal.kind !== "name" && isTestLoopback(literal.address)
    if (options.production && !loopbackTarget) return { ok: false, reason: "https_required" }
  }
  if (literal.kind === "name") {
    // Names reserved for the local host never leave it (RFC 6761); refuse early unless testing.
    const local = literal.name.replace(/\.$/, "")
    if (!options.allowLoopback && (local === "localhost" || local.endsWith(".localhost"))) {
      return { ok: false, reason: "loopback" }
    }
    return { ok: true, url: parsed }
  }
  const verdict = verdictFor(literal.address, options.allowLoopback)
  return verdict.allowed ? { ok: true, url: parsed } : { ok: false, reason: verdict.reason }
}
