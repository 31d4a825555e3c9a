/**
 * Builds the publishable package into dist/: ESM bundles for Node/Deno (`index.js`, `effect.js`, `cli.js` (the
 * `privacy-relay` command: proxy, mcp, demo, transparency), `proxy-worker.js`, `wire.js`)
 * and for browsers (`browser.js`), with the runtime libraries left as dependencies; then the type declarations (tsc).
 *
 * The engine identity is fixed at build time: the package version and the fingerprint of the engine sources (the
 * same recipe as src/client/engine.ts here), so a built package attests the code it was built from, with no file reads.
 */
import { execFileSync } from "node:child_process"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import { engineIdentityPlugin, packageEngine } from "./browserBundle.ts"

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, "..", "..")
const pkg = JSON.parse(readFileSync(join(here, "package.json"), "utf8")) as {
  version: string
  dependencies: Record<string, string>
  peerDependencies: Record<string, string>
}
const engine = packageEngine()

/**
 * The local proxy tokenises large requests in worker threads; in the sources the worker is the file beside
 * workerTokeniser.ts. In the package it is its own entry, dist/proxy-worker.js, found through the package's own
 * `exports` (the module that starts it lands in a chunk, so a path relative to it would depend on the chunking).
 */
const WORKER_URL_IN_SOURCE = 'new URL("./tokeniserWorker.ts", import.meta.url)'
const proxyWorkerUrlPlugin: esbuild.Plugin = {
  name: "proxy-worker-url",
  setup(build) {
    build.onLoad({ filter: /[/\\]proxy[/\\]workerTokeniser\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8")
      if (!source.includes(WORKER_URL_IN_SOURCE)) throw new Error(`${args.path} no longer has ${WORKER_URL_IN_SOURCE}: update build.ts`)
      return { contents: source.replace(WORKER_URL_IN_SOURCE, 'new URL(import.meta.resolve("@privacy-relay/sdk/proxy-worker"))'), loader: "ts" }
    })
  }
}

const dist = join(here, "dist")
rmSync(dist, { recursive: true, force: true })
const common: esbuild.BuildOptions = {
  bundle: true,
  format: "esm",
  target: "es2022",
  sourcemap: true,
  // The optional peers (tesseract.js and its English data, for createImageRedactor on Node) are the user's to install.
  external: [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)],
  plugins: [engineIdentityPlugin(engine), proxyWorkerUrlPlugin],
  logLevel: "warning",
  // The file readers and writers (and the libraries they use) are loaded with import() when first needed: split into
  // chunks, an application that never reads a file never loads them.
  splitting: true,
  chunkNames: "chunks/[name]-[hash]"
}
await esbuild.build({
  ...common,
  platform: "node",
  entryPoints: {
    index: join(here, "src/index.ts"),
    effect: join(here, "src/effect.ts"),
    cli: join(here, "src/cli.ts"),
    "proxy-worker": join(here, "src/proxy/tokeniserWorker.ts"),
    wire: join(here, "src/wire/index.ts")
  },
  outdir: dist,
  banner: { js: "" }
})
await esbuild.build({ ...common, platform: "browser", entryPoints: { browser: join(here, "src/browser.ts") }, outdir: dist })
const cli = join(dist, "cli.js")
writeFileSync(cli, `#!/usr/bin/env node\n${readFileSync(cli, "utf8")}`, { mode: 0o755 })

// Declarations: the SDK's own entry points and everything they reach, under dist/types.
execFileSync(
  join(repo, "node_modules", ".bin", "tsc"),
  ["-p", join(here, "tsconfig.build.json")],
  { stdio: "inherit" }
)
// On stderr: `npm pack --json` owns stdout.
console.error(JSON.stringify({ built: dist, engine }))
