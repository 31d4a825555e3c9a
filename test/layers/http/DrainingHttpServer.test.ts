import { spawnSync } from "node:child_process"
import { createConnection, type Socket } from "node:net"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { afterEach, describe, expect, it } from "vitest"
import { drainingHttpServerLayer } from "../../../layers/http/DrainingHttpServer.ts"
import { refusesConnections } from "../../support/refusesConnections.ts"

/**
 * The gateway program's drain on SIGTERM (layers/http/DrainingHttpServer.ts), in process: the drain starts when the
 * server's scope closes (what SIGTERM does to the program), and the test follows it through the `event` annotation of
 * its log lines, never through sleeps.
 */

interface Started {
  readonly port: number
  /** Events logged so far, in order (`shutdown_draining`, `shutdown_drained`, `shutdown_grace_expired`). */
  readonly events: Array<string>
  /** Resolves when `event` has been logged. */
  readonly logged: (event: string) => Promise<void>
  /** Closes the server's scope: starts the drain; resolves once it and every finalizer after it are done. */
  readonly stop: () => Promise<void>
}

const running: Array<Started> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()))
})

/**
 * A draining server on a free loopback port with one route (`POST /echo` answers the body it read). `onLogged` runs
 * synchronously inside the server's own logger call, so it sees the server exactly as it is when the line is written.
 */
const startDrainingServer = async (onLogged: (event: string) => void = () => {}): Promise<Started> => {
  const events: Array<string> = []
  const waiters: Array<{ event: string; resolve: () => void }> = []
  const capture = Logger.map(Logger.formatStructured, (entry) => {
    const event = entry.annotations.event
    if (typeof event !== "string") return
    events.push(event)
    onLogged(event)
    for (const w of waiters.filter((w) => w.event === event)) w.resolve()
  })
  const routes = HttpRouter.add("POST", "/echo", Effect.gen(function*() {
    const body = yield* (yield* HttpServerRequest.HttpServerRequest).text
    return HttpServerResponse.text(`echo:${body}`)
  }))
  const layer = HttpRouter.serve(routes, { disableLogger: true }).pipe(
    Layer.provideMerge(drainingHttpServerLayer({ host: "127.0.0.1", port: 0, graceMs: 30_000 })),
    Layer.provide(Logger.layer([capture]))
  )
  const runtime = ManagedRuntime.make(layer as Layer.Layer<HttpServer.HttpServer, never, never>)
  const address = await runtime.runPromise(Effect.map(Effect.service(HttpServer.HttpServer), (server) => server.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  let stopped: Promise<void> | undefined
  const started: Started = {
    port: address.port,
    events,
    logged: (event) => events.includes(event) ? Promise.resolve() : new Promise((resolve) => waiters.push({ event, resolve })),
    stop: () => (stopped ??= runtime.dispose())
  }
  running.push(started)
  return started
}

interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** A kept-alive HTTP/1.1 client connection as nginx holds one: requests written by hand, one at a time. */
const openConnection = (port: number) =>
  new Promise<{ socket: Socket; send: (request: string) => Promise<RawResponse>; ended: Promise<void> }>((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    let buffered = ""
    let pending: { resolve: (r: RawResponse) => void; reject: (e: Error) => void } | undefined
    const ended = new Promise<void>((resolveEnded) => socket.once("end", () => resolveEnded()))
    const tryParse = () => {
      const headEnd = buffered.indexOf("\r\n\r\n")
      if (pending === undefined || headEnd < 0) return
      const [statusLine, ...lines] = buffered.slice(0, headEnd).split("\r\n")
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]))
      const length = Number(headers["content-length"])
      if (buffered.length < headEnd + 4 + length) return
      const body = buffered.slice(headEnd + 4, headEnd + 4 + length)
      buffered = buffered.slice(headEnd + 4 + length)
      const done = pending
      pending = undefined
      done.resolve({ status: Number(statusLine!.split(" ")[1]), headers, body })
    }
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      buffered += chunk
      tryParse()
    })
    socket.on("error", (error) => pending?.reject(error))
    socket.on("close", () => pending?.reject(new Error(`connection closed before a whole answer (got ${JSON.stringify(buffered)})`)))
    socket.once("error", reject)
    socket.once("connect", () =>
      resolve({
        socket,
        ended,
        send: (request) =>
          new Promise<RawResponse>((resolveResponse, rejectResponse) => {
            pending = { resolve: resolveResponse, reject: rejectResponse }
            socket.write(request)
          })
      })
    )
  })

const post = (body: string) =>
  `POST /echo HTTP/1.1\r\nHost: gateway\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

/**
 * Opens a TCP connection to `port` from another process while this one is blocked: the answer is the kernel's alone
 * (a listening socket completes the handshake into its backlog whether or not Node gets to accept it).
 */
const connectsFromOutside = (port: number) => {
  const script = `const s=require("node:net").createConnection({host:"127.0.0.1",port:${port}});` +
    `s.on("connect",()=>{process.stdout.write("connected");s.destroy()});s.on("error",(e)=>process.stdout.write(e.code))`
  return spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 30_000 }).stdout
}

describe("a gateway draining after SIGTERM", () => {
  it("logs shutdown_draining only once its listener is closed: a connection opened the instant the line is written is refused, not left in a backlog the close would reset", async () => {
    let atDrainingLine: string | undefined
    let server: Started | undefined = undefined
    server = await startDrainingServer((event) => {
      // Runs inside the drain's own log call; the event loop is blocked until the other process has its answer.
      if (event === "shutdown_draining") atDrainingLine = connectsFromOutside(server!.port)
    })
    const stopped = server.stop()
    await server.logged("shutdown_draining")
    expect(atDrainingLine).toBe("ECONNREFUSED")
    await stopped
    expect(server.events).toEqual(["shutdown_draining", "shutdown_drained"])
  })

  it("answers a POST sent on an idle kept-alive connection after the drain began (200, its body, Connection: close), then closes that connection; the drain ends only after it", async () => {
    const server = await startDrainingServer()
    const connection = await openConnection(server.port)
    const before = await connection.send(post("first"))
    expect({ status: before.status, body: before.body, connection: before.headers.connection }).toEqual({ status: 200, body: "echo:first", connection: "keep-alive" })

    // The connection is idle in the client's pool when the drain starts, as nginx's are.
    const stopped = server.stop()
    await server.logged("shutdown_draining")
    expect(await refusesConnections(server.port), "a new connection while draining").toBe(true)

    // The drain waits for the idle connection instead of closing it under the client.
    expect(server.events).toEqual(["shutdown_draining"])
    // The client sends its next call on the pooled connection: a real answer, not a reset, and the connection ends.
    const during = await connection.send(post("second"))
    expect({ status: during.status, body: during.body, connection: during.headers.connection }).toEqual({ status: 200, body: "echo:second", connection: "close" })
    await connection.ended
    await stopped
    expect(server.events).toEqual(["shutdown_draining", "shutdown_drained"])
  })
})
