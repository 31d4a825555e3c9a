/**
 * The benchmark's yardstick: the thinnest Node HTTP hop that can relay an LLM call. It forwards each request's
 * method, path, body and content headers to BARE_UPSTREAM_URL over a keep-alive undici pool and pipes the answer
 * back as it arrives (SSE included). Whatever the gateway costs beyond this is the gateway's own work.
 *
 * Run: `npx node bench/bare-proxy.ts` with BARE_UPSTREAM_URL (origin) and PORT (0 = ephemeral); prints one JSON
 * line `{"msg":"bare proxy listening","url":...}`. Listens on 127.0.0.1 only.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Pool } from "undici"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { BARE_PROXY_SETTINGS } from "./settings/bareProxy.ts"

const { upstreamUrl: upstream, port } = readBenchSettings("bench/bare-proxy.ts", BARE_PROXY_SETTINGS)
const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 30_000 })
/** Only what a provider needs to parse the call; hop-by-hop headers stay on this side. */
const FORWARDED = ["content-type", "accept", "authorization", "x-request-id"]

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const headers: Record<string, string> = {}
    for (const name of FORWARDED) {
      const v = req.headers[name]
      if (typeof v === "string") headers[name] = v
    }
    const abort = new AbortController()
    res.on("close", () => abort.abort())
    pool.request({ origin: upstream, path: req.url ?? "/", method: req.method as "POST", headers, body: Buffer.concat(chunks), signal: abort.signal })
      .then(async (up) => {
        const ct = up.headers["content-type"]
        res.writeHead(up.statusCode, typeof ct === "string" ? { "content-type": ct } : {})
        for await (const chunk of up.body) res.write(chunk)
        res.end()
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(502)
        res.end()
      })
  })
})
server.keepAliveTimeout = 30_000
server.listen(port, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ msg: "bare proxy listening", url: `http://127.0.0.1:${port}` })}\n`)
})
const stop = () => server.close(() => pool.close().finally(() => process.exit(0)))
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
