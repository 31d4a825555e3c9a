/**
 * The SDK as esbuild bundles it, shared by the package build (build.ts), the browser test and the SDK benchmark:
 * the engine identity fixed at build time, and a self-contained bundle of the browser entry for a web page (the SDK
 * with all its dependencies, what an application's bundler ships), with or without the built-in name model.
 */
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import type { EngineIdentity } from "./src/wire/attestation/v3.ts"
import { ENGINE_ID, engineSourceSha256 } from "./src/client/engine.ts"

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, "..", "..")

/** The package version and the fingerprint of the engine sources (the recipe of sdks/typescript/src/client/engine.ts). */
export const packageEngine = (): EngineIdentity => {
  const pkg = JSON.parse(readFileSync(join(here, "package.json"), "utf8")) as { version: string }
  return { id: ENGINE_ID, version: pkg.version, sha256: engineSourceSha256(repo) }
}

/** sdks/typescript/src/client/engine.ts reads files at load; a bundle carries its identity instead. */
export const engineIdentityPlugin = (engine: EngineIdentity): esbuild.Plugin => ({
  name: "engine-identity",
  setup(build) {
    build.onResolve({ filter: /\/client\/engine\.ts$/ }, () => ({ path: "engine-identity", namespace: "engine-identity" }))
    build.onLoad({ filter: /.*/, namespace: "engine-identity" }, () => ({
      contents: `export const ENGINE_ID = ${JSON.stringify(engine.id)}; export const ENGINE = ${JSON.stringify(engine)};`,
      loader: "js"
    }))
  }
})

/**
 * For measuring the engine without the built-in name model (compromise and its rules): the module is replaced by
 * one whose model is unavailable, as for an application that uses nameModel "off" or a name model service.
 */
const withoutBuiltinNameModel: esbuild.Plugin = {
  name: "without-builtin-name-model",
  setup(build) {
    build.onResolve({ filter: /\/builtinNameModel\.ts$/ }, () => ({ path: "no-builtin-name-model", namespace: "no-builtin-name-model" }))
    build.onLoad({ filter: /.*/, namespace: "no-builtin-name-model" }, () => ({
      contents: `import { NameModelUnavailable } from ${JSON.stringify(join(repo, "sdks/typescript/src/tokeniser/NameModel.ts"))}
export const detectNamesWithCompromise = () => { throw new NameModelUnavailable("the built-in name model is not in this bundle") }
export const builtinNameModel = { detect: async () => detectNamesWithCompromise() }`,
      loader: "ts",
      resolveDir: repo
    }))
  }
}

/**
 * One file cannot hold lazily loaded chunks: the file readers and writers, which the SDK loads with import() only when
 * a file is read or rebuilt, are left out of the page bundle (a page that reads files is bundled with code splitting,
 * as Vite and the package build do).
 */
const withoutLazyFileModules: esbuild.Plugin = {
  name: "without-lazy-file-modules",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => (args.kind === "dynamic-import" && /\/files$/.test(args.resolveDir) ? { path: args.path, external: true } : undefined))
  }
}

/** The browser entry and every dependency in one minified ESM file, ready for `<script type="module">`. */
export const bundleBrowserPage = async (options: { readonly nameModel: "builtin" | "excluded"; readonly engine?: EngineIdentity }): Promise<Uint8Array> => {
  const result = await esbuild.build({
    entryPoints: [join(here, "src/browser.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    logLevel: "warning",
    plugins: [engineIdentityPlugin(options.engine ?? packageEngine()), withoutLazyFileModules, ...(options.nameModel === "excluded" ? [withoutBuiltinNameModel] : [])]
  })
  return result.outputFiles[0]!.contents
}

/**
 * The browser entry as an application's bundler ships it: ES modules with code splitting, so the file readers and
 * writers (and their libraries) are chunks loaded with import() only when a file is read or rebuilt. Output paths
 * (relative: `browser.js` is the entry) -> contents.
 */
export const bundleBrowserApp = async (options: { readonly engine?: EngineIdentity } = {}): Promise<Map<string, Uint8Array>> => {
  const result = await esbuild.build({
    entryPoints: { browser: join(here, "src/browser.ts") },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    outdir: "/bundle",
    chunkNames: "chunks/[name]-[hash]",
    logLevel: "warning",
    plugins: [engineIdentityPlugin(options.engine ?? packageEngine())]
  })
  return new Map(result.outputFiles.map((f) => [f.path.slice("/bundle/".length), f.contents]))
}
