/**
 * The gateway's request and response types, generated from its OpenAPI document (docs/openapi.json) by
 * openapi-typescript into ./openapi/gateway.ts (`npm run openapi` in the repository; a test fails while it is stale).
 * Types only: nothing here exists at run time.
 */
import type { components, operations, paths } from "./openapi/gateway.ts"

export type GatewayPaths = paths
export type GatewayOperations = operations
/** The named schemas: `GatewaySchemas["Key"]`, `GatewaySchemas["ReceiptV1"]`, ... */
export type GatewaySchemas = components["schemas"]

/** The JSON body an operation answers with `status` (200 unless given): `GatewayResponse<"listKeys">["keys"]`. */
export type GatewayResponse<Op extends keyof operations, Status extends number = 200> = operations[Op]["responses"] extends
  Record<Status, { content: { "application/json": infer Body } }> ? Body : never

type SuccessStatus = 200 | 201 | 202

/**
 * The JSON body of an operation's success answer, whichever 2xx it is (200, 201 for a create, 202 for an accepted
 * test): what the REST client's method for that operation resolves to. An operation answering 204 resolves to `{}`.
 */
export type GatewayOk<Op extends keyof operations> = {
  [S in keyof operations[Op]["responses"] & SuccessStatus]: operations[Op]["responses"][S] extends { content: { "application/json": infer Body } } ? Body : never
}[keyof operations[Op]["responses"] & SuccessStatus] extends infer Body ? [Body] extends [never] ? Record<string, never> : Body : never
