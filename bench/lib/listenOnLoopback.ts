/**
 * Preloaded (`node --import`) into a peer gateway the bench starts: every server it opens listens on 127.0.0.1, even
 * when the program asks for all interfaces. Portkey's gateway has no host setting (it calls `listen(port)`), and
 * nothing the bench starts may be reachable from outside the machine.
 */
import net from "node:net"

const LOOPBACK = "127.0.0.1"
const listen = net.Server.prototype.listen

net.Server.prototype.listen = function(this: net.Server, ...args: Array<unknown>) {
  const [first] = args
  if (typeof first === "object" && first !== null && !("fd" in first) && !("path" in first)) {
    args[0] = { ...first, host: LOOPBACK }
  } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen(port, [host], [backlog], [callback]): put the host in second place, replacing one that was given.
    if (typeof args[1] === "string") args[1] = LOOPBACK
    else args.splice(1, 0, LOOPBACK)
  }
  return (listen as (...a: Array<unknown>) => net.Server).apply(this, args)
} as typeof net.Server.prototype.listen
