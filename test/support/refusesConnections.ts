import { createConnection } from "node:net"

/**
 * Whether a new TCP connection to 127.0.0.1:`port` is refused (ECONNREFUSED): how a draining gateway's listener is
 * seen to be closed (test/layers/http/DrainingHttpServer.test.ts, test/deploy/multiProcess.test.ts).
 */
export const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"))
  })
