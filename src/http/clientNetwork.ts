import { isIPv6 } from "node:net"

/**
 * The "network" a self-service issuance is counted against: the exact IPv4 address, or the /64 of an IPv6
 * address (one subscriber usually owns a whole /64). IPv4-mapped IPv6 counts as the IPv4 address.
 */
export const networkOf = (ip: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) return mapped[1]
  if (!isIPv6(ip)) return ip
  return expandIPv6(ip).slice(0, 4).join(":") + "::/64"
}

const expandIPv6 = (ip: string): Array<string> => {
  const [head, tail] = ip.split("%")[0].split("::")
  const h = head ? head.split(":") : []
  const t = tail === undefined ? [] : tail ? tail.split(":") : []
  const missing = 8 - h.length - t.length
  const groups = tail === undefined ? h : [...h, ...Array(Math.max(0, missing)).fill("0"), ...t]
  return groups.map((g) => (g || "0").toLowerCase().replace(/^0+(?=.)/, ""))
}

/**
 * The client address: the socket peer, or the first X-Forwarded-For entry when the peer is a configured trusted
 * proxy (never otherwise: the header is client-controlled).
 */
export const clientAddress = (
  socketPeer: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: ReadonlyArray<string>
): string => {
  const peer = socketPeer ?? "unknown"
  if (forwardedFor !== undefined && trustedProxies.includes(peer)) {
    const first = forwardedFor.split(",")[0]?.trim()
    if (first) return first
  }
  return peer
}
