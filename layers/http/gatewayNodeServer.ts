/**
 * The gateway's Node HTTP server. The gateway serves no protocol upgrade (no WebSocket, no h2c), so every request
 * that asks for one is answered as the plain HTTP/1.1 request it also is (RFC 9110 section 7.8: a server may ignore
 * Upgrade). Without this, Effect's server hands each upgrade attempt to its WebSocket handler, which closes the
 * connection: the JDK's HttpClient offers `Upgrade: h2c` on every new plain-http connection, so about one call in
 * three from a Java client to a loopback gateway was dropped.
 */
import { createServer, type Server } from "node:http"

export const createGatewayNodeServer = (): Server => createServer({ shouldUpgradeCallback: () => false })
