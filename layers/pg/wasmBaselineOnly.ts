import { setFlagsFromString } from "node:v8"

/**
 * Keeps this process's WebAssembly on V8's baseline compiler (Liftoff): no TurboFan tier-up. Called before the
 * embedded database (PGlite, PostgreSQL compiled to WASM) is compiled.
 *
 * Why: TurboFan optimising PostgreSQL's large functions in the background takes hundreds of MiB of compiler memory
 * for a few seconds at a time. Measured with PGlite 0.5.14 on Node 24 (2 cores): opening a fresh data directory peaked
 * at 1,069-1,097 MiB VmHWM with tier-up and 649 MiB without; 9,000 statements on an existing one peaked at 811-836 MiB
 * with tier-up and 337-344 MiB without, and took no longer (2.2-6.5 s vs 3.3-6.6 s on a shared machine: the
 * optimising compiler's threads compete with the statements for the two cores). docs/decisions.md.
 *
 * Set at run time, `--liftoff-only` alone is not enough (the flags it implies at start-up are not re-derived), so
 * the tier-up flags are switched off explicitly. Only WASM compiled after this call is affected; the gateway itself
 * runs no other WASM.
 */
let applied = false
export const keepWasmOnBaselineCompiler = (): void => {
  if (applied) return
  applied = true
  setFlagsFromString("--liftoff-only")
  setFlagsFromString("--no-wasm-tier-up")
  setFlagsFromString("--no-wasm-dynamic-tiering")
}
