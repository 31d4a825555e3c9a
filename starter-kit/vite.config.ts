// The starter kit's Vite build: React with the automatic JSX runtime, no React plugin needed. `@privacy-relay/sdk`
// resolves to the package's browser build; the app loads it lazily (src/engine.ts), so the page is interactive first.
import { defineConfig } from "vite"

export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "react" } },
  build: {
    target: "es2022",
    // The engine chunk (tokeniser and built-in name model) is large by nature and loaded after the first paint.
    chunkSizeWarningLimit: 2048
  }
})
