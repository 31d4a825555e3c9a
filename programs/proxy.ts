/**
 * The local proxy: `node programs/proxy.ts` (npm run proxy), the repository's entry point of `privacy-relay proxy`
 * (sdks/typescript/src/proxy/runProxy.ts). Point any OpenAI or Anthropic client at http://127.0.0.1:8799/v1;
 * personal data is tokenised on this device and only tokens reach the gateway. Settings: docs/proxy.md.
 */
import { runProxy } from "../sdks/typescript/src/proxy/runProxy.ts"
import { stopWithParent } from "../sdks/typescript/src/wire/node/stopWithParent.ts"

await runProxy(process.argv.slice(2), process.env, { afterStart: stopWithParent })
