import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { ReceiptKeys } from "../../services/ReceiptKeys.ts"
import { publicJwkToPem } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { receiptKeyStatus, rotateReceiptKeys } from "../AdminOperations.ts"
import { requirePortal } from "./auth.ts"

/**
 * Receipt verification keys, public: the JWKS (every key ever used, current first; it doubles as the gateway
 * identity probe) and the current key as PEM. Rotation and the key list (with the schedule) are admin operations.
 */
export const ReceiptKeyRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/api/.well-known/service-receipt-pubkeys.jwks", Effect.gen(function*() {
    const jwks = yield* (yield* ReceiptKeys).jwks
    return HttpServerResponse.jsonUnsafe(jwks, { headers: { "cache-control": "public, max-age=300" } })
  }))
  yield* router.add("GET", "/api/.well-known/service-receipt-pubkey.pem", Effect.gen(function*() {
    // The stored current key (not this process's cache), named by its kid; cached no later than the next scheduled
    // rotation, so a PEM fetched before a boundary is not kept past it.
    const keys = yield* ReceiptKeys
    const { keys: [current] } = yield* keys.jwks
    const { next_rotation_at } = yield* keys.status
    const untilRotation = next_rotation_at === null ? 300 : Math.floor((Date.parse(next_rotation_at) - Date.now()) / 1000)
    return HttpServerResponse.text(publicJwkToPem(current!), {
      contentType: "application/x-pem-file",
      headers: {
        "cache-control": `public, max-age=${Math.max(0, Math.min(300, untilRotation))}`,
        "x-service-receipt-kid": current!.kid
      }
    })
  }))
  yield* router.add("POST", "/api/admin/receipts/keys/rotate", Effect.gen(function*() {
    yield* requirePortal("ability:admin")
    return HttpServerResponse.jsonUnsafe(yield* rotateReceiptKeys)
  }))
  yield* router.add("GET", "/api/admin/receipts/keys", Effect.gen(function*() {
    yield* requirePortal("ability:admin")
    return HttpServerResponse.jsonUnsafe(yield* receiptKeyStatus, { headers: { "cache-control": "no-store" } })
  }))
}))
