/**
 * Lingering close, as nginx does it: a server that answers before it has read the request body (413 on
 * Content-Length, 401 for a bad key, ...) must not close the connection while the client is still sending. Closing a
 * socket with unread bytes arriving makes the kernel reset the connection; a client that writes its whole body before
 * reading the answer (the official `openai` package, httpx) then reports the reset ("Connection error.",
 * "WriteError: Broken pipe") and never sees the answer. So the rest of the body is read and thrown away, for a bounded
 * time and number of bytes, before the connection is closed. Used by the gateway (layers/http/lingeringBody.ts) and
 * the local proxy (sdks/typescript/src/proxy/proxyServer.ts): under the wire, the one part of the SDK the gateway may
 * import, but in wire/node and not in the portable `@privacy-relay/sdk/wire` index, because it is Node-only.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

export interface LingerBounds {
  /** Longest time spent reading what the client still sends (nginx's lingering_time is 30 s). */
  readonly maxMs: number
  /** Most bytes read and discarded; a body declared larger is not read at all. */
  readonly maxBytes: number
}

export const LINGER_BOUNDS: LingerBounds = { maxMs: 10_000, maxBytes: 64 * 1024 * 1024 }

/** Whether nothing has read this request's body yet and some of it may still come. */
export const bodyUnread = (req: IncomingMessage): boolean =>
  !req.complete && !req.destroyed && req.readableFlowing === null && (req.headers["content-length"] !== undefined ? Number(req.headers["content-length"]) > 0 : req.headers["transfer-encoding"] !== undefined)

/**
 * Reads the rest of the request body and discards it; true when it ended within the bounds, false when the bounds
 * were hit first (reading is then paused, and the caller closes the connection).
 */
export const drainRequestBody = (req: IncomingMessage, bounds: LingerBounds = LINGER_BOUNDS): Promise<boolean> => {
  if (req.complete) return Promise.resolve(true)
  const declared = Number(req.headers["content-length"] ?? "0")
  if (req.destroyed || declared > bounds.maxBytes) return Promise.resolve(false)
  return new Promise((resolve) => {
    let bytes = 0
    const finish = (ended: boolean) => {
      clearTimeout(timer)
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("close", onClose)
      if (!ended) req.pause()
      resolve(ended)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > bounds.maxBytes) finish(false)
    }
    const onEnd = () => finish(true)
    const onClose = () => finish(req.complete)
    const timer = setTimeout(() => finish(false), bounds.maxMs)
    timer.unref()
    req.on("data", onData)
    req.once("end", onEnd)
    req.once("close", onClose)
    req.resume()
  })
}

/**
 * For an answer sent with `Connection: close` before the body was read: once the answer is written, the rest of the
 * body is drained (bounded) and only then is the connection closed. Node on its own would destroy the socket right
 * after the answer (and read nothing), which resets the connection under a client that is still writing.
 * Call before `res.end`. Uses two Node internals, as @effect/platform-node's server does for the same reason:
 * `_last` (close after this answer) and `_consuming` (the body is being read: do not dump it).
 */
export const lingerAfterAnswer = (req: IncomingMessage, res: ServerResponse, bounds: LingerBounds = LINGER_BOUNDS): void => {
  // Prepended: runs before Node's own `finish` listener, which would end and destroy the socket.
  res.prependListener("finish", () => {
    if (req.complete || req.destroyed) return
    const socket = req.socket
    ;(res as unknown as { _last: boolean })._last = false
    ;(req as unknown as { _consuming: boolean })._consuming = true
    void drainRequestBody(req, bounds).then((ended) => {
      if (socket.destroyed) return
      if (!ended) return void socket.destroy()
      // Our FIN after the whole body was read: nothing unread is left to turn the close into a reset.
      socket.end()
      setTimeout(() => socket.destroy(), 1_000).unref()
    })
  })
}
