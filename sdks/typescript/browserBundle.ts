/**
 * The SDK as esbuild bundles it, shared by the package build (build.ts), the browser test and the SDK benchmark:
 * the engine identity fixed at build time, a self-contained bundle of the browser entry for a web page (the SDK with
 * all its dependencies, what an application's bundler ships), and the sizes of that bundle split as a bundler splits it
 * (what loads at start, what the built-in name model adds on first use).
 */
import { readFileSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { gzipSync } from "node:zlib"
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

/**
 * The browser entry and every dependency in one minified ESM file, ready for `<script type="module">`. The built-in
 * name model, loaded with import() on first use, is inlined (one file has no chunks to fetch later).
 */
export const bundleBrowserPage = async (options: { readonly engine?: EngineIdentity } = {}): Promise<Uint8Array> => {
  const result = await esbuild.build({
    entryPoints: [join(here, "src/browser.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    logLevel: "warning",
    plugins: [engineIdentityPlugin(options.engine ?? packageEngine()), withoutLazyFileModules]
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

/** Bytes of some bundle files, raw and each gzipped (level 9) as a server would send them. */
export interface BundleSize {
  readonly files: number
  readonly bytes: number
  readonly gzipBytes: number
}

/**
 * The browser entry as an application's bundler splits it (esbuild, code splitting, minified): what a page loads at
 * start (the entry and the chunks it imports statically) and what the built-in name model adds when the first text is
 * scanned for names (its lazily imported chunk and what that chunk imports beyond the start). The file readers, also
 * loaded lazily, are in neither.
 */
export const splitBrowserBundle = async (options: { readonly engine?: EngineIdentity } = {}): Promise<{ readonly atStart: BundleSize; readonly nameModel: BundleSize }> => {
  const outdir = join(here, ".bundle-measure")
  const result = await esbuild.build({
    entryPoints: { browser: join(here, "src/browser.ts") },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    splitting: true,
    write: false,
    metafile: true,
    absWorkingDir: here,
    outdir,
    logLevel: "warning",
    plugins: [engineIdentityPlugin(options.engine ?? packageEngine())]
  })
  const outputs = result.metafile.outputs
  const contents = new Map(result.outputFiles.map((file) => [relative(here, file.path).split(sep).join("/"), file.contents]))
  const staticClosure = (from: ReadonlyArray<string>): Set<string> => {
    const seen = new Set<string>()
    const pending = [...from]
    while (pending.length > 0) {
      const file = pending.pop()!
      if (seen.has(file)) continue
      seen.add(file)
      for (const imported of outputs[file]?.imports ?? []) if (imported.kind === "import-statement") pending.push(imported.path)
    }
    return seen
  }
  const entry = Object.keys(outputs).find((file) => outputs[file]!.entryPoint !== undefined && file.endsWith("browser.js"))!
  const atStart = staticClosure([entry])
  const namesChunks = Object.keys(outputs).filter((file) => Object.keys(outputs[file]!.inputs).some((input) => input.endsWith("tokeniser/names/nameRules.ts")))
  if (namesChunks.some((file) => atStart.has(file))) throw new Error("the built-in name model is in the bundle's start-up files: it must load lazily")
  const nameModel = [...staticClosure(namesChunks)].filter((file) => !atStart.has(file))
  const size = (files: Iterable<string>): BundleSize => {
    let count = 0
    let bytes = 0
    let gzipBytes = 0
    for (const file of files) {
      const body = contents.get(file)!
      count++
      bytes += body.length
      gzipBytes += gzipSync(body, { level: 9 }).length
    }
    return { files: count, bytes, gzipBytes }
  }
  return { atStart: size(atStart), nameModel: size(nameModel) }
}
