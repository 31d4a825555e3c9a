/**
 * Builds the publishable package into dist/: ESM bundles for Node/Deno (`index.js`, `effect.js`, `cli.js`, `wire.js`)
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

const dist = join(here, "dist")
rmSync(dist, { recursive: true, force: true })
const common: esbuild.BuildOptions = {
  bundle: true,
  format: "esm",
  target: "es2022",
  sourcemap: true,
  // The optional peers (tesseract.js and its English data, for createImageRedactor on Node) are the user's to install.
  external: [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)],
  plugins: [engineIdentityPlugin(engine)],
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
