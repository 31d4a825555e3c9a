import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { TransparencyLog } from "../../services/TransparencyLog.ts"
import { ApiError } from "../../src/http/ApiError.ts"

/** The receipt transparency log, public: signed tree head and inclusion proofs (docs/receipts.md). */
export const TransparencyRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/api/v1/transparency/sth", Effect.gen(function*() {
    return HttpServerResponse.jsonUnsafe(yield* (yield* TransparencyLog).treeHead)
  }))
  yield* router.add("GET", "/api/v1/transparency/proof/:jti", Effect.gen(function*() {
    const { jti } = yield* HttpRouter.params
    const proof = jti !== undefined && /^[0-9a-f]{32}$/.test(jti) ? yield* (yield* TransparencyLog).inclusionProof(jti) : undefined
    if (proof === undefined) {
      return yield* new ApiError({ status: 404, code: "not_found", message: "No receipt with this id is in the transparency log." })
    }
    return HttpServerResponse.jsonUnsafe(proof)
  }))
}))
