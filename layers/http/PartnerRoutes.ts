import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { BillingHistory } from "../../services/BillingHistory.ts"
import { Organisations } from "../../services/Organisations.ts"
import { formatUsd } from "../../src/billing/money.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { invalid, optionalString, rejectUnknownFields } from "../../src/http/validate.ts"
import { requirePortal } from "./auth.ts"
import { readDocumentedBody } from "./body.ts"
import { usageResponse } from "./BillingRoutes.ts"
import { apiRoute } from "./api/apiRoutes.ts"

/**
 * Partner mode: a parent organisation creates sub-organisations (each with its own wallet, keys, limits and
 * quotas) and reads their usage. Reach is one level down only: a sub-organisation never sees its parent or its
 * siblings, because every lookup is `parent_id = <caller's org>`.
 */
export const PartnerRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const organisations = yield* Organisations
  const history = yield* BillingHistory

  yield* router.add("POST", "/api/v1/orgs/sub", Effect.gen(function*() {
    const portal = yield* requirePortal("abilities:write")
    const body = yield* readDocumentedBody(apiRoute("POST", "/api/v1/orgs/sub"))
    const unknown = rejectUnknownFields(body, ["name"])
    if (unknown !== undefined) return yield* unknown
    const name = optionalString(body, "name", 200)
    if (name instanceof ApiError) return yield* name
    if (name === undefined || name.trim() === "") return yield* invalid("name", "name is required.")
    const { orgId } = yield* organisations.create({ name: name.trim(), parentId: portal.orgId })
    return HttpServerResponse.jsonUnsafe(
      { org_id: orgId, parent_id: portal.orgId, name: name.trim(), balance_micros: 0, balance_usd: formatUsd(0n) },
      { status: 201 }
    )
  }))

  yield* router.add("GET", "/api/v1/orgs/sub", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.read")
    const subs = yield* history.subOrganisations(portal.orgId)
    return HttpServerResponse.jsonUnsafe({
      organisations: subs.map((s) => ({
        org_id: s.orgId,
        name: s.name,
        balance_micros: Number(s.balanceMicros),
        balance_usd: formatUsd(s.balanceMicros),
        created_at: s.createdAt
      }))
    })
  }))

  yield* router.add("GET", "/api/v1/orgs/sub/:id/usage", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.read")
    const { id } = yield* HttpRouter.params
    // Not one of the caller's sub-organisations (its parent, a sibling, a stranger): indistinguishable from absent.
    if (id === undefined || !(yield* history.isSubOrganisation(portal.orgId, id))) {
      return yield* new ApiError({ status: 404, code: "not_found", message: "No such sub-organisation." })
    }
    return yield* usageResponse(id)
  }))
}))
