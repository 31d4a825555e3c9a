import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import { createGatewayNodeServer } from "./gatewayNodeServer.ts"

/**
 * The gateway program's HTTP server: Effect's Node server, plus a drain that runs first when the program is told to
 * stop (SIGTERM/SIGINT interrupt the main fiber, which closes this layer's scope):
 *
 * 1. The listener closes at once: new connections are refused, so a proxy (deploy/nginx) sends them to another
 *    node; nothing has been sent on them, so even a POST may go there. The `shutdown: draining` line is logged once
 *    the listener is closed, never before.
 * 2. Calls and streams already accepted run on for up to `graceMs`, then are cut.
 * 3. Every response whose headers are written from now on says `Connection: close`, and its connection closes after
 *    it. The server never closes a kept-alive connection between requests itself: that races a proxy that has just
 *    sent a new call on it (nginx answers such a POST 502 and may not retry it). Not even right after the last byte
 *    of a response whose headers went out before the signal (a stream): under load the proxy may reuse the
 *    connection before the FIN arrives (seen in the test). Idle connections are left to their clients, which close
 *    them before the gateway would (nginx's upstream keepalive_timeout is 4 s, Node's keep-alive 5 s); a call that
 *    still arrives on one is served, with `Connection: close`. So a drain lasts as long as the longest call in
 *    flight plus at most the clients' keep-alive timeout.
 * 4. Once every connection is gone (or the grace expired), Effect's own shutdown finds the server closed, request
 *    fibers still running are interrupted, and the other layers close: queued settlements are written (KeyedBatcher)
 *    and webhook attempts in flight are recorded (WebhookDispatcherLive) before the process exits.
 *
 * Node's own `server.close()` is not used for step 1: it also destroys idle kept-alive connections, the race above.
 */
export const drainingHttpServerLayer = (options: { readonly host: string; readonly port: number; readonly graceMs: number }) =>
  Layer.mergeAll(
    Layer.effect(
      HttpServer.HttpServer,
      Effect.gen(function*() {
        const node = createGatewayNodeServer()
        const inFlight = new Set<ServerResponse>()
        let draining = false
        // Registered before Effect's handler, so it sees each request first.
        node.on("request", (_req: IncomingMessage, res: ServerResponse) => {
          if (draining) {
            res.shouldKeepAlive = false
            return
          }
          inFlight.add(res)
          res.once("close", () => inFlight.delete(res))
        })
        const base = yield* NodeHttpServer.make(() => node, {
          port: options.port,
          host: options.host,
          // Effect's own wait (server.close) comes after the drain below; by then there is nothing left to wait for.
          gracefulShutdownTimeout: Duration.millis(Math.max(options.graceMs, 1))
        })

        const drain = Effect.gen(function*() {
          const started = Date.now()
          draining = true
          for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false
          // Closing a listening socket resets the connections the kernel has completed but Node has not accepted yet
          // (its backlog; under load, calls nginx has already sent, which it then answers 502). Closing right after an
          // event-loop poll, which accepts everything pending, leaves that window as small as it gets.
          const connectionsEnded = yield* Effect.callback<Promise<void>>((resume) => {
            setImmediate(() => {
              // net.Server's close: stops listening at once (the socket is closed before it returns) and calls back
              // once every connection has ended.
              const ended = new Promise<void>((resolve) => NetServer.prototype.close.call(node, () => resolve()))
              resume(Effect.succeed(ended))
            })
          })
          // Written only now that the listener is closed: whoever reads "draining" (an operator, a test, an
          // orchestrator's log watch) may rely on new connections being refused. Written before the close, under load
          // the line could come out many milliseconds before it, while the node still accepted connections.
          yield* Effect.logInfo("shutdown: draining").pipe(
            Effect.annotateLogs({ event: "shutdown_draining", in_flight: inFlight.size, grace_ms: options.graceMs })
          )
          const outcome = yield* Effect.callback<"drained" | "grace_expired">((resume) => {
            const timer = setTimeout(() => resume(Effect.succeed("grace_expired")), Math.max(0, options.graceMs - (Date.now() - started)))
            void connectionsEnded.then(() => {
              clearTimeout(timer)
              resume(Effect.succeed("drained"))
            })
          })
          if (outcome === "drained") {
            yield* Effect.logInfo("shutdown: drained").pipe(
              Effect.annotateLogs({ event: "shutdown_drained", duration_ms: Date.now() - started })
            )
          } else {
            const cut = inFlight.size
            node.closeAllConnections()
            yield* Effect.logWarning("shutdown: grace period over, cutting the calls still running").pipe(
              Effect.annotateLogs({ event: "shutdown_grace_expired", cut, grace_ms: options.graceMs })
            )
          }
        })

        return HttpServer.make({
          address: base.address,
          serve: (app, middleware) =>
            Effect.gen(function*() {
              yield* (middleware === undefined ? base.serve(app) : base.serve(app, middleware as any))
              // Added after serve's own finalizer, so it runs before it (finalizers run in reverse order).
              yield* Effect.addFinalizer(() => drain)
            })
        })
      })
    ),
    NodeHttpServer.layerHttpServices
  )
