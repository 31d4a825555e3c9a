import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { invalid } from "../../src/http/validate.ts"

/** `?limit=` (1-200, default 50) and `?cursor=` of paginated billing reads. */
export const readPage = Effect.gen(function*() {
  const search = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
  const rawLimit = search.get("limit")
  const limit = rawLimit === null ? 50 : Number(rawLimit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) return yield* invalid("limit", "limit is an integer from 1 to 200.")
  const cursor = search.get("cursor") ?? undefined
  return { limit, cursor: cursor === "" ? undefined : cursor, search }
})
