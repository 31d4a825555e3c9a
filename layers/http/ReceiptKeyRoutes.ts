import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { publicJwkToPem } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { rotateReceiptKeys } from "../AdminOperations.ts"
import { requirePortal } from "./auth.ts"

/**
 * Receipt verification keys, public: the JWKS (every key ever used, current first; it doubles as the gateway
 * identity probe) and the current key as PEM. Rotation is an admin operation.
 */
export const ReceiptKeyRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/api/.well-known/service-receipt-pubkeys.jwks", Effect.gen(function*() {
    const jwks = yield* (yield* ReceiptKeys).jwks
    return HttpServerResponse.jsonUnsafe(jwks, { headers: { "cache-control": "public, max-age=300" } })
  }))
  yield* router.add("GET", "/api/.well-known/service-receipt-pubkey.pem", Effect.gen(function*() {
    const current = yield* (yield* ReceiptKeys).current
    return HttpServerResponse.text(publicJwkToPem(current.jwk), {
      contentType: "application/x-pem-file",
      headers: { "cache-control": "public, max-age=300" }
    })
  }))
  yield* router.add("POST", "/api/admin/receipts/keys/rotate", Effect.gen(function*() {
    yield* requirePortal("ability:admin")
    return HttpServerResponse.jsonUnsafe(yield* rotateReceiptKeys)
  }))
}))
