/**
 * `npm run demo`: the anonymous terminal chat of the TypeScript SDK (`npx privacy-relay demo` once the package is
 * installed), run from the repository. GATEWAY_URL (default http://127.0.0.1:8080), NAME_MODEL; `--help`.
 */
import { runDemo } from "../sdks/typescript/src/demo.ts"

process.exitCode = await runDemo(process.argv.slice(2), process.env, { input: process.stdin, output: process.stdout, errors: process.stderr })
