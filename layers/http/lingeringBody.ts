import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { IncomingMessage } from "node:http"
import { bodyUnread, drainRequestBody } from "../../sdks/typescript/src/wire/node/lingeringClose.ts"

/**
 * Before an answer that was decided without reading the request body (413 on Content-Length, 401 for a bad key, ...):
 * read and discard the rest of the body, for at most 10 s and 64 MiB (sdks/typescript/src/wire/node/lingeringClose.ts). The server would
 * otherwise close the connection with body bytes still arriving (Effect's Node server closes once more than 256 KiB
 * are unread), the kernel would reset it, and a client that writes its whole body before reading (the official
 * `openai` package, httpx) would get a connection error instead of the answer. Past the bounds the connection is
 * closed as before. A no-op for requests whose body was read, or that have none.
 */
export const drainUnreadBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> =>
  Effect.suspend(() => {
    let req: IncomingMessage
    try {
      req = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
    } catch {
      return Effect.void // not served by Node's HTTP server (a test's web handler): nothing to drain
    }
    if (req === undefined || req.httpVersionMajor !== 1 || !bodyUnread(req)) return Effect.void
    return Effect.promise(() => drainRequestBody(req))
  })
