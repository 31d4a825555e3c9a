import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { OidcProvider } from "./OidcProvider.ts"

/**
 * Mounts the OIDC provider inside Effect's router: the route hands the raw Node request and response (from
 * @effect/platform-node's `toIncomingMessage` / `toServerResponse`) to oidc-provider's Koa handler, waits until the
 * response is finished, and returns a placeholder that the Node server discards because the response has already
 * ended (`NodeHttpServer` skips writing when `writableEnded`). The request body is untouched by Effect, so Koa reads it.
 * OAuth answers keep the standard `{ error, error_description }` bodies (RFC 6749 section 5.2; docs/sso.md).
 */
export const OidcRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const oidc = yield* OidcProvider
  const delegate = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const req = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
    const res = NodeHttpServerRequest.toServerResponse(request) as ServerResponse
    yield* Effect.callback<void>((resume) => {
      const done = () => resume(Effect.void)
      res.once("finish", done)
      res.once("close", done)
      oidc.handle(req, res).catch(done)
      return Effect.sync(() => {
        res.off("finish", done)
        res.off("close", done)
      })
    })
    return HttpServerResponse.empty({ status: res.statusCode })
  })
  yield* router.add("GET", "/.well-known/openid-configuration", delegate)
  yield* router.add("*", "/oauth/*", delegate)
}))
