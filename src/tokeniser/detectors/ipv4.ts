import { textBefore } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"

// Four dotted decimal octets 0-255 without leading zeros ("010.001.000.001" is a serial, not how
// addresses are written). Not part of a longer dotted run ("1.2.3.4.5"), not glued to letters
// ("v1.2.3.4", "rc1.2.3.4"), not followed by a pre-release suffix ("10.0.0.1-beta").
const IPV4 = /(?<![\p{L}\p{N}._\-])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\p{L}\p{N}_]|\.\d|-[A-Za-z])/gu

// A version cue right before the number always wins: "version 10.0.0.1", "v 10.0.0.1", "release 4.2.0.1".
const VERSION_CUE =
  /(?:\b(?:v|ver|version|versión|versione|release|build|firmware|fw|rev|revision|update|patch|sdk|api|kb|chrome|firefox|edge|windows|ios|android|macos)\.?\s*[:=]?\s*|\bv)$/i

// Four-part numbers that are not addresses (software versions above all) are as common as addresses,
// so an address must be announced by its context: a network word in the same line, a port or prefix
// length right after it ("10.0.0.1:8080", "100.64.0.1/10"), or the start of a line (log lines).
const NETWORK_CUE =
  /\b(?:ip|ipv4|ips|address|addresses|addr|host|hosts|hostname|server|servers|client|peer|from|to|connect|connected|connection|login|logged|access|log|logs|firewall|blocked|block|ban|banned|allow|allowlist|whitelist|blacklist|denylist|gateway|router|dns|resolver|nameserver|proxy|vpn|subnet|netmask|route|ping|ssh|telnet|listen|bind|nat|lan|wan|remote|source|destination|src|dst|adresse|adresa|dirección|direccion|indirizzo|ip-adresse|attacker)\b/i

const isOctet = (s: string): boolean => (s === "0" || !s.startsWith("0")) && Number(s) <= 255

const lineAround = (text: string, start: number, end: number): { before: string; after: string } => {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1
  const nl = text.indexOf("\n", end)
  const lineEnd = nl === -1 ? text.length : nl
  return { before: text.slice(Math.max(lineStart, start - 80), start), after: text.slice(end, Math.min(lineEnd, end + 40)) }
}

export const ipv4Detector: Detector = {
  type: "IPV4",
  detect: (text) =>
    spansFromRegex(text, IPV4, "IPV4", (m) => {
      const start = m.index
      const end = start + m[0].length
      if (![m[1]!, m[2]!, m[3]!, m[4]!].every(isOctet)) return undefined
      if (VERSION_CUE.test(textBefore(text, start, 30))) return undefined
      const { before, after } = lineAround(text, start, end)
      const announced =
        NETWORK_CUE.test(before) ||
        NETWORK_CUE.test(after) ||
        /^(?::\d{1,5}\b|\/\d{1,2}\b)/.test(after) ||
        textBefore(text, start, 200).trim() === ""
      return announced ? { start, end } : undefined
    })
}
