// The starter kit's Vite build: React with the automatic JSX runtime, no React plugin needed. `@privacy-relay/sdk`
// resolves to the package's browser build; the app loads it lazily (src/engine.ts), so the page is interactive first.
import { defineConfig, type Plugin } from "vite"

/**
 * The engine chunk is imported with import() once the page has rendered; a modulepreload link lets the browser fetch
 * and compile it while it is still loading the page's own script, so the first message waits less.
 */
const preloadEngine = (): Plugin => ({
  name: "preload-engine",
  apply: "build",
  transformIndexHtml: {
    order: "post",
    handler: (_html, context) => {
      const engine = Object.values(context.bundle ?? {}).find((chunk) => chunk.type === "chunk" && chunk.isDynamicEntry && (chunk.name === "sdk" || chunk.name === "browser"))
      return engine === undefined ? [] : [{ tag: "link", attrs: { rel: "modulepreload", href: `/${engine.fileName}` }, injectTo: "head" }]
    }
  }
})

export default defineConfig({
  plugins: [preloadEngine()],
  oxc: { jsx: { runtime: "automatic", importSource: "react" } },
  build: {
    target: "es2022",
    // The engine chunk (tokeniser and built-in name model) is large by nature and loaded after the first paint.
    chunkSizeWarningLimit: 2048
  }
})
