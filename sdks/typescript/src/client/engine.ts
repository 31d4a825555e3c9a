/**
 * Identity of this client engine, sent as `X-Service-Engine: relay-ts/<version>` and attested in every
 * v3 attestation. Node-only (reads files): the browser/Deno SDKs get their identity from their build.
 *
 * `sha256` fingerprints the engine build: SHA-256 over the engine's source files, i.e. every `.ts` file
 * under `sdks/typescript/src/tokeniser/`, `sdks/typescript/src/client/`, `sdks/typescript/src/files/` (attachments
 * become the text that is tokenised), `sdks/typescript/src/ocr/` (the image redactor decides which pixels leave) and `sdks/typescript/src/proxy/` (the code that decides what leaves the device), sorted by their repository-relative path with `/` separators, each
 * contributing the line
 * `<path>\0<sha256 hex of the file bytes>\n`. Computed once when this module loads, so it describes the
 * code actually running; a gateway that pins engine hashes can recompute it from a release checkout.
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import type { EngineIdentity } from "../wire/attestation/v3.ts"

export const ENGINE_ID = "relay-ts"

/** The directories, relative to the repository root, whose `.ts` files make up the engine. */
export const ENGINE_SOURCE_DIRS: ReadonlyArray<string> = ["sdks/typescript/src/tokeniser", "sdks/typescript/src/client", "sdks/typescript/src/files", "sdks/typescript/src/ocr", "sdks/typescript/src/proxy"]

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url))

const sha256Hex = (bytes: string | Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

const tsFilesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFilesUnder(path)
    return entry.isFile() && entry.name.endsWith(".ts") ? [path] : []
  })

/** The engine build fingerprint of the sources under `root` (see the module comment for the exact recipe). */
export const engineSourceSha256 = (root: string = REPO_ROOT): string => {
  const files = ENGINE_SOURCE_DIRS.flatMap((dir) => tsFilesUnder(join(root, dir)))
    .map((absolute) => ({ absolute, path: relative(root, absolute).split(sep).join("/") }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const digest = createHash("sha256")
  for (const file of files) digest.update(`${file.path}\0${sha256Hex(readFileSync(file.absolute))}\n`)
  return digest.digest("hex")
}

const packageVersion = (root: string): string => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }
  if (typeof pkg.version !== "string") throw new Error("package.json has no version")
  return pkg.version
}

/** This engine: id `relay-ts`, the package version, and the source fingerprint. */
export const ENGINE: EngineIdentity = {
  id: ENGINE_ID,
  version: packageVersion(REPO_ROOT),
  sha256: engineSourceSha256(REPO_ROOT)
}
