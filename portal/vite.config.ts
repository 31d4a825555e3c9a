// The portal: a static single-page app the gateway serves at /portal/ (layers/http/PortalRoutes.ts).
// `npm run portal:build` writes portal/dist. The SDK is imported by its package name, resolved to its browser entry.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// The SDK's browser entry also carries the on-device engine (tokeniser, name model), which the portal never uses:
// the SDK and shared sources have no import-time effects the portal relies on, so modules of theirs whose exports
// go unused are left out of the bundle.
const sharedSources = [here("../sdks/typescript/src/"), here("../src/")]
const withoutEffects = (id: string) => sharedSources.some((dir) => id.startsWith(dir))

export default defineConfig({
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
