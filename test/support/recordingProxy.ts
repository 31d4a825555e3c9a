/**
 * An HTTP hop that records every request passing through it (method, path, headers, body) and forwards it unchanged
 * to `target`, streaming the answer back: put in front of a gateway, it shows exactly what a client component sent.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"

export interface RecordedHop {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface RecordingProxy {
  readonly url: string
  readonly requests: Array<RecordedHop>
  readonly close: () => Promise<void>
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"])

const readAll = async (req: IncomingMessage) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

export const startRecordingProxy = async (target: string): Promise<RecordingProxy> => {
  const requests: Array<RecordedHop> = []
  const server = createServer(async (req, res) => {
    const body = await readAll(req)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string" && !HOP_BY_HOP.has(name)) headers[name] = value
    requests.push({ method: req.method ?? "GET", path: req.url ?? "/", headers, body: body.toString("utf8") })
    const abort = new AbortController()
    res.on("close", () => abort.abort())
    try {
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
        redirect: "manual",
        signal: abort.signal
      })
      const out: Record<string, string> = {}
      answer.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name) && name !== "content-encoding") out[name] = value
      })
      res.writeHead(answer.status, out)
      if (answer.body === null) return void res.end()
      Readable.fromWeb(answer.body as import("node:stream/web").ReadableStream<Uint8Array>).on("error", () => res.destroy()).pipe(res)
    } catch {
      if (!res.headersSent) res.writeHead(502).end()
      else res.destroy()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
