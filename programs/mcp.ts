/**
 * The self-hosted MCP server (docs/mcp.md): `node programs/mcp.ts` (npm run mcp), the repository's entry point of
 * `privacy-relay mcp` (sdks/typescript/src/mcp/runMcp.ts).
 */
import { runMcp } from "../sdks/typescript/src/mcp/runMcp.ts"
import { stopWithParent } from "../sdks/typescript/src/wire/node/stopWithParent.ts"

await runMcp(process.env, { afterStart: stopWithParent })
