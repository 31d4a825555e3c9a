/**
 * Builds the starter kit inside the Privacy Relay repository: the SDK's browser entry is bundled from this checkout's
 * source with the package build's engine identity (fixed at build time) and code splitting (the file readers stay
 * lazily loaded chunks), and Vite builds the app against it. A fork outside the repository runs plain `vite build`,
 * which takes the npm package.
 *
 * `node starter-kit/build.ts [outDir]` (default starter-kit/dist).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import * as esbuild from "esbuild"
import { build } from "vite"
import { engineIdentityPlugin, packageEngine } from "../sdks/typescript/browserBundle.ts"
import { DEFAULT_APP_DIR } from "./settings.ts"

const here = import.meta.dirname

/** Builds the app into `outDir` (emptied first); resolves once the files are written. */
export const buildStarterKit = async (outDir: string = DEFAULT_APP_DIR): Promise<void> => {
  const sdkDir = mkdtempSync(join(tmpdir(), "starter-sdk-"))
  try {
    await esbuild.build({
      entryPoints: { sdk: join(here, "..", "sdks", "typescript", "src", "browser.ts") },
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      outdir: sdkDir,
      logLevel: "warning",
      plugins: [engineIdentityPlugin(packageEngine())]
    })
    const sdkFile = join(sdkDir, "sdk.js")
    await build({
      configFile: join(here, "vite.config.ts"),
      root: here,
      logLevel: "warn",
      resolve: { alias: { "@privacy-relay/sdk": sdkFile } },
      build: { outDir: resolve(outDir), emptyOutDir: true }
    })
  } finally {
    rmSync(sdkDir, { recursive: true, force: true })
  }
}

if (process.argv[1] === import.meta.filename) {
  const outDir = process.argv[2] ?? DEFAULT_APP_DIR
  await buildStarterKit(outDir)
  console.error(JSON.stringify({ built: resolve(outDir) }))
}
