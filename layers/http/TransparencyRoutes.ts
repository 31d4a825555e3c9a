import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { TransparencyLog } from "../../services/TransparencyLog.ts"
import { ApiError, invalidRequest } from "../../src/http/ApiError.ts"

/** A tree size in a query: decimal digits only, at most 15 (below 2^53). */
const treeSizeParam = (search: URLSearchParams, name: "first" | "second", required: boolean) => {
  const text = search.get(name)
  if (text === null) return required ? Effect.fail(invalidRequest(`${name} is required: the tree size of the head you kept.`, name)) : Effect.succeed(undefined)
  if (!/^[0-9]{1,15}$/.test(text)) return Effect.fail(invalidRequest(`${name} must be a tree size: a whole number of leaves.`, name))
  return Effect.succeed(Number(text))
}

/**
 * The receipt transparency log, public: signed tree head, inclusion proofs and consistency proofs
 * (docs/receipts.md, "Transparency log").
 */
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
  yield* router.add("GET", "/api/v1/transparency/consistency", Effect.gen(function*() {
    const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    const first = yield* treeSizeParam(search, "first", true)
    const second = yield* treeSizeParam(search, "second", false)
    return HttpServerResponse.jsonUnsafe(yield* (yield* TransparencyLog).consistencyProof(first!, second))
  }))
}))
