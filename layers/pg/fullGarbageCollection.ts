import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * One full garbage collection, now. Used once, right after the embedded database has opened: a first start runs
 * initdb in a second PGlite instance and copies the new data directory through memory, and all of that (a second
 * WASM memory and ~200 MiB of array buffers) stayed resident until V8 next collected the old generation, which the
 * gateway's small old generation put off for many seconds of load (peak RSS 660 MiB in the bench, ~100 MiB of it
 * this garbage). `gc` is exposed for this call only, in a throw-away context, so nothing else can reach it.
 */
export const collectGarbageNow = (): void => {
  setFlagsFromString("--expose-gc")
  // Where the flag cannot be set at run time (another runtime), there is no `gc` and nothing is collected early.
  const gc = runInNewContext("typeof gc === \"function\" ? gc : undefined") as (() => void) | undefined
  setFlagsFromString("--no-expose-gc")
  gc?.()
}
