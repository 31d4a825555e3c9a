// The portal: a static single-page app the gateway serves at /portal/ (layers/http/PortalRoutes.ts).
// `npm run portal:build` writes portal/dist. The SDK is imported by its package name, resolved to its browser entry.
import { fileURLToPath } from "node:url"
import { defineConfig, type Plugin } from "vite"
import { packageEngine } from "../sdks/typescript/browserBundle.ts"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// The SDK's browser entry also carries the on-device engine (tokeniser, name model), which the portal never uses:
// the SDK and shared sources have no import-time effects the portal relies on, so modules of theirs whose exports
// go unused are left out of the bundle.
const sharedSources = [here("../sdks/typescript/src/"), here("../src/")]
const withoutEffects = (id: string) => sharedSources.some((dir) => id.startsWith(dir))

// The SDK's engine identity module reads its own source files with node:fs at load (Node and Deno); every browser
// build of the SDK replaces it with the identity fixed at build time (sdks/typescript/browserBundle.ts), and so does
// this one: without it the bundle would import node:fs, node:path, node:url and node:crypto (externalized to empty
// stubs, with a warning each) and a `new URL(..., import.meta.url)` that cannot resolve in a browser.
const engineIdentity = (): Plugin => {
  const id = "\0privacy-relay-engine-identity"
  return {
    name: "privacy-relay-engine-identity",
    enforce: "pre",
    resolveId: (source, importer) => (/\/client\/engine\.ts$/.test(source) && importer?.startsWith(here("../sdks/typescript/src/")) ? id : undefined),
    load: (loaded) => {
      if (loaded !== id) return undefined
      const engine = packageEngine()
      return `export const ENGINE_ID = ${JSON.stringify(engine.id)}; export const ENGINE = ${JSON.stringify(engine)};`
    }
  }
}

export default defineConfig({
  plugins: [engineIdentity()],
  root: here("."),
  base: "/portal/",
  resolve: {
    alias: { "@privacy-relay/sdk": here("../sdks/typescript/src/browser.ts") }
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: here("dist"),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 400,
    rolldownOptions: { treeshake: { moduleSideEffects: (id: string) => !withoutEffects(id) } }
  }
})
