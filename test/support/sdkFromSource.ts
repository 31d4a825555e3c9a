/**
 * `node --import ./test/support/sdkFromSource.ts program.ts`: `@privacy-relay/sdk` and `@privacy-relay/sdk/effect`
 * resolve to this checkout's SDK source instead of the package build, so the examples (written as a user writes them,
 * importing the package) run against the code under test without a build. The package build itself is proven by
 * test/sdks/typescript/pack.test.ts.
 */
import { registerHooks } from "node:module"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const SRC = join(import.meta.dirname, "..", "..", "sdks", "typescript", "src")
const ENTRIES: Record<string, string> = {
  "@privacy-relay/sdk": pathToFileURL(join(SRC, "index.ts")).href,
  "@privacy-relay/sdk/effect": pathToFileURL(join(SRC, "effect.ts")).href
}

registerHooks({
  resolve: (specifier, context, nextResolve) => {
    const url = ENTRIES[specifier]
    return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true }
  }
})
