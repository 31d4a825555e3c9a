// Writes docs/openapi.json from the route registry (layers/http/api) and the error catalogue (docs/errors.md).
// `npm run openapi`; test/layers/http/api/openApiDocument.test.ts fails while the checked-in file is stale.
import { writeFileSync } from "node:fs"
import { OPENAPI_JSON_PATH, renderOpenApiJson } from "../layers/http/api/generate.ts"

writeFileSync(OPENAPI_JSON_PATH, renderOpenApiJson())
console.log(`wrote ${OPENAPI_JSON_PATH}`)
