/**
 * A point between two pieces of tokenisation work where the engine gives way: it stops when the
 * caller's signal is aborted (the client went away, or the time budget ran out), and it lets the host's
 * event loop run (health checks, signals, other requests) once it has computed for `sliceMs` without a
 * break. Portable: no Node-only API is required.
 */
export type Checkpoint = () => Promise<void>

/** How long the engine computes before it yields to the event loop. */
export const DEFAULT_SLICE_MS = 20

const nextTurn = (): Promise<void> =>
  new Promise((resolve) => {
    // setImmediate runs after pending I/O without the 1 ms clamp of setTimeout; browsers lack it.
    const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate
    if (immediate !== undefined) immediate(resolve)
    else setTimeout(resolve, 0)
  })

export const createCheckpoint = (signal?: AbortSignal, sliceMs: number = DEFAULT_SLICE_MS): Checkpoint => {
  let since = performance.now()
  return async () => {
    signal?.throwIfAborted()
    if (performance.now() - since < sliceMs) return
    await nextTurn()
    since = performance.now()
    signal?.throwIfAborted()
  }
}
