import { createServer, type Socket } from "node:net"

/**
 * Just enough of a Redis server on loopback for a gateway to connect and PING (RESP2: INFO answers "loading:0",
 * PING answers PONG, anything else OK), which a test can stop and start again on the same port to play a Redis
 * outage. Not a store: nothing is kept.
 */
export const startFakeRedis = async () => {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
    socket.on("data", (data) => {
      // One reply per command: each command is a RESP array ("*<n>"); its first bulk string is the name.
      for (const command of data.toString("latin1").split(/(?=\*\d+\r\n)/)) {
        const name = /^\*\d+\r\n\$\d+\r\n([^\r]+)/.exec(command)?.[1]?.toUpperCase()
        if (name === undefined) continue
        if (name === "PING") socket.write("+PONG\r\n")
        else if (name === "INFO") socket.write("$11\r\nloading:0\r\n\r\n")
        else socket.write("+OK\r\n")
      }
    })
  })
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()))
  await listen(0)
  const port = (server.address() as { port: number }).port
  return {
    url: `redis://127.0.0.1:${port}`,
    /** Stops listening and drops every connection: the gateway's next command finds no Redis. */
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
    restart: () => listen(port),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        if (server.listening) server.close(() => resolve())
        else resolve()
      })
  }
}
