import { createServer, type Server } from "node:net"

/**
 * A mail server for tests that takes every message and keeps it: the few SMTP commands nodemailer sends on a plain
 * `smtp://` connection without authentication (EHLO, MAIL, RCPT, DATA, QUIT), nothing else (no STARTTLS, no AUTH).
 * `listen(port)` lets a test bring it up on the port a gateway was configured with while the server was down.
 */
export interface FakeSmtp {
  /** The messages received, headers and body as sent (dot-stuffing undone). */
  readonly messages: Array<string>
  readonly close: () => Promise<void>
}

export const startFakeSmtp = async (port: number): Promise<FakeSmtp> => {
  const messages: Array<string> = []
  const server: Server = createServer((socket) => {
    socket.setEncoding("utf8")
    let buffered = ""
    let data: Array<string> | undefined
    const reply = (line: string) => socket.write(`${line}\r\n`)
    reply("220 fake-smtp ESMTP")
    socket.on("data", (chunk: string) => {
      buffered += chunk
      let end: number
      while ((end = buffered.indexOf("\r\n")) !== -1) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        if (data !== undefined) {
          if (line === ".") {
            messages.push(data.join("\r\n"))
            data = undefined
            reply("250 2.0.0 queued")
          } else data.push(line.startsWith("..") ? line.slice(1) : line)
          continue
        }
        const verb = line.slice(0, 4).toUpperCase()
        if (verb === "EHLO" || verb === "HELO") reply("250 fake-smtp")
        else if (verb === "DATA") {
          data = []
          reply("354 end with <CRLF>.<CRLF>")
        } else if (verb === "QUIT") {
          reply("221 bye")
          socket.end()
        } else reply("250 OK")
      }
    })
    socket.on("error", () => socket.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve())
  })
  return { messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}
