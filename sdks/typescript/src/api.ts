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
