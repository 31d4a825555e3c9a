import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import packageJson from "../../../package.json" with { type: "json" }
import { API_ROUTES } from "./apiRoutes.ts"
import { parseErrorCatalogue } from "./errorCatalogue.ts"
import { openApiDocument } from "./openApiDocument.ts"

export const OPENAPI_JSON_PATH = fileURLToPath(new URL("../../../docs/openapi.json", import.meta.url))
const ERRORS_MD = new URL("../../../docs/errors.md", import.meta.url)

/** The exact text of docs/openapi.json as the registry and docs/errors.md produce it now. */
export const renderOpenApiJson = (): string =>
  JSON.stringify(openApiDocument(API_ROUTES, parseErrorCatalogue(readFileSync(ERRORS_MD, "utf8")), { version: packageJson.version }), null, 2) + "\n"
