import { Schema } from "effect"
import { route } from "./ApiRoute.ts"

const Model = Schema.Struct({
  id: Schema.String.annotate({ description: "What `model` accepts: the bare id, or `provider/model`." }),
  object: Schema.Literal("model"),
  owned_by: Schema.String,
  provider: Schema.String,
  pooled: Schema.Boolean,
  byok: Schema.Boolean,
  capabilities: Schema.Array(Schema.String),
  input_usd_per_mtok: Schema.String,
  output_usd_per_mtok: Schema.String,
  available: Schema.Boolean
}).annotate({ identifier: "Model" })

export const modelRoutes = [
  route({
    method: "GET", path: "/api/v1/models", operationId: "listModels", tag: "Relay", summary: "The models the caller can call now",
    description: "With a gateway key: its organisation's view (pooled providers plus its BYOK providers, within the key's allowlist). Without: what any key can call with the pooled keys.",
    auth: { kind: "gatewayKey", demo: true, optional: true },
    query: [{ name: "include", description: "`unavailable` lists the whole catalogue with `available: false` on the rest.", schema: Schema.Literal("unavailable") }],
    responses: [{ status: 200, description: "An OpenAI-style model list.", body: Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(Model) }) }],
    errors: ["invalid_request"]
  })
]
