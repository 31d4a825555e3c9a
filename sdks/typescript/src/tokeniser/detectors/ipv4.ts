import { textBefore } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"
import { fieldKindAt, wholeValueKindAt } from "./fieldKinds.ts"

// Four dotted decimal octets 0-255 without leading zeros ("010.001.000.001" is a serial, not how
// addresses are written). Not part of a longer dotted run ("1.2.3.4.5"), not glued to letters
// ("v1.2.3.4", "rc1.2.3.4"), not followed by a pre-release suffix ("10.0.0.1-beta").
const IPV4 = /(?<![\p{L}\p{N}._\-])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\p{L}\p{N}_]|\.\d|-[A-Za-z])/gu

// A version cue right before the number always wins: "version 10.0.0.1", "v 10.0.0.1", "release 4.2.0.1".
// "Upgraded from 7.4.18.8 to 4.29.10.86": from/to after an upgrade word are versions, not hosts.
const UPGRADE_CUE = /\b(?:upgrad|updat|downgrad|migrat|bump|aktualisier|mis à jour|actualiz|bijgewerkt)\w*\b[^\n\d]{0,20}(?:\d[\w.\-]*[^\n\d]{1,12})?(?:from|to|von|auf|de|à|a|naar|van)\s*$/i

const VERSION_CUE =
  /(?:\b(?:v|ver|version|versión|versione|release|build|firmware|fw|rev|revision|update|patch|sdk|api|kb|chrome|firefox|edge|windows|ios|android|macos)\.?\s*[:=]?\s*|\bv)$/i

// Four-part numbers that are not addresses (software versions above all) are as common as addresses,
// so an address must be announced by its context: a network word in the same line, a port or prefix
// length right after it ("10.0.0.1:8080", "100.64.0.1/10"), or the start of a line (log lines).
export const NETWORK_CUE =
  /\b(?:ip|ipv4|ipv6|inet|inet6|loopback|localhost|ips|address|addresses|addr|host|hosts|hostname|server|servers|client|peer|from|to|connect|connected|connection|login|logged|access|log|logs|firewall|blocked|block|ban|banned|allow|allowlist|whitelist|blacklist|denylist|gateway|router|dns|resolver|nameserver|proxy|vpn|subnet|netmask|route|ping|ssh|telnet|listen|bind|nat|lan|wan|remote|source|destination|src|dst|forwarded|upstream|downstream|endpoint|url|uri|adresse|adresa|dirección|direccion|indirizzo|ip-adresse|attacker|vanaf|vandaan|depuis|desde|von|aus|connexion|anmeldung|zugriff|acceso|conexión|conexion|inlog|inlogpoging|inlogpogingen|inloggen|verbinding|verbindingen|aanmelding|aanmeldingen|anmeldungen|anmeldeversuche|zugriffe|connexions|conexiones|accesos|accessi|accesso|pare-feu|cortafuegos)\b/i

/** A URL's host: "https://10.0.0.5/admin", "ssh://deploy@10.0.0.5". */
const URL_HOST_BEFORE = /:\/\/(?:[^\s@\/]*@)?$/

/**
 * A log line's timestamp and nothing else before the address: "2026-11-28T08:00:01Z 10.32.69.1 GET /", "[12:30:45]
 * 10.0.0.2 ...". Only for numbers that do not look like a version (a release log's "2026-11-28 4.2.0.1" stays a version).
 */
const LOG_TIMESTAMP_BEFORE =
  /^\s*[[(]?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)[\])]?\s*$/

/**
 * Version numbers have small parts and a small major ("4.12.0.3", "2.3.0.15"); addresses in the 1-9
 * first octet ranges with every octet under 100 are rare. Used only where a field calls itself a client
 * or version, so a real address there ("client=10.0.0.5", "client=84.12.9.201") is still tokenised.
 */
const looksLikeVersion = (parts: ReadonlyArray<string>): boolean => Number(parts[0]) < 10 && parts.every((p) => Number(p) < 100)

const isOctet = (s: string): boolean => (s === "0" || !s.startsWith("0")) && Number(s) <= 255

/**
 * A network range in CIDR notation: "/prefix" (0 to 31) right after an address whose host bits are all zero
 * ("192.168.0.0/16", "10.0.0.0/8"). It names a network, no one's device; an address with host bits set keeps its
 * prefix as an interface's address ("inet 10.0.0.5/24", "100.64.0.1/10") and is still one.
 */
const isNetworkRange = (parts: ReadonlyArray<string>, text: string, end: number): boolean => {
  const m = /^\/(\d{1,2})(?!\d)/.exec(text.slice(end, end + 4))
  if (m === null || Number(m[1]) > 31) return false
  const address = parts.reduce((value, part) => value * 256 + Number(part), 0)
  return address % 2 ** (32 - Number(m[1])) === 0
}

/** Up to 80 characters before and 40 after, within the line (only that much is read: linear on long lines). */
export const lineAround = (text: string, start: number, end: number): { before: string; after: string } => {
  const before = text.slice(Math.max(0, start - 80), start)
  const after = text.slice(end, end + 40)
  const nl = after.indexOf("\n")
  return { before: before.slice(before.lastIndexOf("\n") + 1), after: nl === -1 ? after : after.slice(0, nl) }
}

export const ipv4Detector: Detector = {
  type: "IPV4",
  detect: (text) =>
    spansFromRegex(text, IPV4, "IPV4", (m) => {
      const start = m.index
      const end = start + m[0].length
      const parts = [m[1]!, m[2]!, m[3]!, m[4]!]
      if (!parts.every(isOctet)) return undefined
      if (isNetworkRange(parts, text, end)) return undefined
      // A field label decides first: an "ip" column or key announces an address, a "version", "client" or
      // "build" field holds a version ("client=4.12.0.3"), an id/order/amount field a reference.
      const kind = fieldKindAt(text, start, end)
      if (kind === "ip") return { start, end }
      if (wholeValueKindAt(text, start, end) === "reference") return undefined
      if (kind === "version" && looksLikeVersion(parts)) return undefined
      if (VERSION_CUE.test(textBefore(text, start, 30)) || UPGRADE_CUE.test(textBefore(text, start, 60))) return undefined
      const { before, after } = lineAround(text, start, end)
      const announced =
        NETWORK_CUE.test(before) ||
        NETWORK_CUE.test(after) ||
        /^(?::\d{1,5}\b|\/\d{1,2}\b)/.test(after) ||
        URL_HOST_BEFORE.test(before) ||
        (LOG_TIMESTAMP_BEFORE.test(before) && !looksLikeVersion(parts)) ||
        textBefore(text, start, 200).trim() === ""
      return announced ? { start, end } : undefined
    })
}
