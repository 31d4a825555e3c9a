// Writes docs/openapi.json from the route registry (layers/http/api) and the error catalogue (docs/errors.md), and
// the TypeScript types openapi-typescript generates from it (sdks/typescript/src/openapi/gateway.ts: the SDK's and
// portal's response types, and the client smoke test's). `npm run openapi`; the tests fail while either checked-in file is stale.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { CLIENT_TYPES_PATH, OPENAPI_JSON_PATH, renderClientTypes, renderOpenApiJson } from "../layers/http/api/generate.ts"

const document = renderOpenApiJson()
writeFileSync(OPENAPI_JSON_PATH, document)
console.log(`wrote ${OPENAPI_JSON_PATH}`)
mkdirSync(dirname(CLIENT_TYPES_PATH), { recursive: true })
writeFileSync(CLIENT_TYPES_PATH, await renderClientTypes(document))
console.log(`wrote ${CLIENT_TYPES_PATH}`)
