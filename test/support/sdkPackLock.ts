import { createHash } from "node:crypto"
import { mkdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { REPO_ROOT } from "./importGraph.ts"

/** A lock is left by a test that died mid-pack after this long; a pack takes well under a minute. */
const STALE_MS = 5 * 60_000

/**
 * `npm pack` of the SDK rebuilds sdks/typescript/dist (prepack: the build removes it first). Two test files packing
 * at once (vitest runs files in parallel) would read each other's half-built dist, so packs of this checkout take
 * turns: a lock directory (mkdir is atomic) beside the system's temporary files, one per checkout.
 */
export const withSdkPackLock = <A>(pack: () => A): A => {
  const lock = join(tmpdir(), `privacy-relay-sdk-pack-${createHash("sha256").update(REPO_ROOT).digest("hex").slice(0, 12)}.lock`)
  const sleeper = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_MS) rmSync(lock, { recursive: true, force: true })
      } catch {
        // Released meanwhile.
      }
      Atomics.wait(sleeper, 0, 0, 200)
    }
  }
  try {
    return pack()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
