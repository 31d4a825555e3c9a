import { Validator } from "@seriousme/openapi-schema-validator"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { API_ROUTES } from "../../../../layers/http/api/apiRoutes.ts"
import { bodyProblem } from "../../../../layers/http/api/bodyProblem.ts"
import { parseErrorCatalogue } from "../../../../layers/http/api/errorCatalogue.ts"
import { OPENAPI_JSON_PATH, renderOpenApiJson } from "../../../../layers/http/api/generate.ts"
import { KeyCreateRequest } from "../../../../layers/http/api/keys.ts"
import { documentedErrors } from "../../../support/errorCatalogue.ts"

const checkedIn = readFileSync(OPENAPI_JSON_PATH, "utf8")
const document = JSON.parse(checkedIn)

describe("docs/openapi.json", () => {
  it("is what `npm run openapi` generates from the route registry and docs/errors.md now (regenerate it when this fails)", () => {
    expect(checkedIn).toBe(renderOpenApiJson())
  })

  it("is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator against the official schema)", async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(document))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("lists every error code of the catalogue with its status, and every operation's error codes answer with the shared envelope", () => {
    const catalogue = new Map(document.components["x-error-catalogue"].map((e: { code: string; status: number }) => [e.code, e.status]))
    expect(catalogue).toEqual(new Map(documentedErrors()))
    expect(document.components.schemas.ErrorCode.enum).toEqual([...documentedErrors().keys()])
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const code of op["x-error-codes"] as Array<string>) {
          const response = op.responses[String(catalogue.get(code))]
          expect(response, `${method} ${path}: ${code}`).toBeDefined()
          expect(JSON.stringify(response.content["application/json"].schema)).toContain("#/components/schemas/Error")
          expect(response.description, `${method} ${path}`).toContain(`\`${code}\``)
        }
      }
    }
  })

  it("describes auth per route: gateway key, portal token or session with abilities, or none", () => {
    const op = (method: string, path: string) => document.paths[path][method]
    expect(op("post", "/api/v1/chat/completions").security).toEqual([{ gatewayKey: [] }])
    expect(op("post", "/api/keys").security).toEqual([{ portalToken: ["ability:keys.write"] }, { portalSession: ["ability:keys.write"] }])
    expect(op("get", "/api/v1/models").security).toEqual([{}, { gatewayKey: [] }])
    expect(op("post", "/api/v1/receipts/verify").security).toEqual([])
    expect(op("get", "/api/v1/openapi.json").security).toEqual([])
    expect(op("post", "/api/keys").parameters).toContainEqual({ $ref: "#/components/parameters/Idempotency-Key" })
    expect(op("post", "/api/keys").parameters).toContainEqual({ $ref: "#/components/parameters/X-CSRF-Token" })
    for (const header of ["X-Request-Id", "traceparent"]) expect(op("get", "/healthz").parameters).toContainEqual({ $ref: `#/components/parameters/${header}` })
  })

  it("describes the relay stream with its receipt-v2 trailer and the receipt headers", () => {
    const ok = document.paths["/api/v1/chat/completions"].post.responses["200"]
    expect(ok.content["text/event-stream"]["x-sse-trailer"]).toEqual({ event: "receipt-v2", data: { $ref: "#/components/schemas/ReceiptV2" } })
    expect(Object.keys(ok.headers)).toEqual(expect.arrayContaining(["X-Service-Receipt-V2", "X-Service-Receipt-V2-JTI", "X-Service-Receipt-V3"]))
    expect(document.paths["/api/v1/chat/completions"].post.responses["401"].description).toContain("invalid_key")
    expect(document.webhooks.delivery.post.parameters.map((p: { name: string }) => p.name)).toContain("X-Service-Signature")
  })

  it("has one operation id per route and no route twice", () => {
    const ids = API_ROUTES.map((r) => r.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    const keys = API_ROUTES.map((r) => `${r.method} ${r.path}`)
    expect(new Set(keys).size).toBe(keys.length)
  })
})

describe("request bodies are decoded with the documented schema", () => {
  it("names the offending field of a body that breaks it, and accepts one that conforms", () => {
    expect(bodyProblem(KeyCreateRequest, { name: "ci", permissions: ["completions"], rotation_days: 30 })).toBeUndefined()
    expect(bodyProblem(KeyCreateRequest, { colour: "red" })).toEqual({ path: "colour", message: 'Unknown field "colour".' })
    expect(bodyProblem(KeyCreateRequest, { permissions: ["completions", "root"] })?.path).toBe("permissions[1]")
    expect(bodyProblem(KeyCreateRequest, { rotation_days: 0 })?.path).toBe("rotation_days")
    expect(bodyProblem(KeyCreateRequest, { name: "x".repeat(101) })?.path).toBe("name")
  })

  it("parses the catalogue table of docs/errors.md", () => {
    const rows = parseErrorCatalogue("| status | code | when |\n|---|---|---|\n| 401 | `invalid_key` | bad key |\n")
    expect(rows).toEqual([{ status: 401, code: "invalid_key", when: "bad key" }])
  })
})
