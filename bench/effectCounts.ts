/**
 * A preload that counts the Effect runtime's work in a process, per HTTP request: fibers started, run-loop entries
 * (a fiber started or resumed after waiting), primitive operations evaluated, and setImmediate calls (each Effect
 * scheduler turn is one). On SIGUSR2 it prints, to stderr, the totals since the previous SIGUSR2 and the same per
 * request (`effect-count {...} per request {...}`), then starts counting again. For issue 41's question of what the
 * fiber runtime costs per relayed call:
 *
 *   FRONT_KINDS=200-json FRONT_HOLD=200-json:25 FRONT_GATEWAY_LOG=/tmp/ec \
 *     FRONT_NODE_FLAGS="--import ./bench/effectCounts.ts" node bench/frontStages.ts
 *   kill -USR2 <gateway pid>   # when "holding" is printed, and again ~15 s later; read /tmp/ec.new
 *
 * It wraps the fiber class's runLoop and evaluate (reached through a fiber's prototype: Effect does not export the
 * class), so it depends on Effect's internals and adds a little work per step itself; never load it in production.
 */
import { Effect } from "effect"
import http from "node:http"

const counts = { requests: 0, fibers: 0, runLoops: 0, ops: 0, immediates: 0 }

interface FiberInternals {
  currentOpCount: number
  runLoop(effect: unknown): unknown
  evaluate(effect: unknown): unknown
}
const fiberClass = Object.getPrototypeOf(Effect.runFork(Effect.void)) as FiberInternals
const runLoop = fiberClass.runLoop
fiberClass.runLoop = function(this: FiberInternals, effect: unknown) {
  counts.runLoops++
  try {
    return runLoop.call(this, effect)
  } finally {
    counts.ops += this.currentOpCount
  }
}
const evaluate = fiberClass.evaluate
const started = new WeakSet<object>()
fiberClass.evaluate = function(this: FiberInternals, effect: unknown) {
  if (!started.has(this)) {
    started.add(this)
    counts.fibers++
  }
  return evaluate.call(this, effect)
}

const setImmediateBefore = globalThis.setImmediate
globalThis.setImmediate = Object.assign(function(this: unknown, ...args: Parameters<typeof setImmediate>) {
  counts.immediates++
  return setImmediateBefore.apply(this, args)
}, setImmediateBefore)

const emit = http.Server.prototype.emit as (this: http.Server, name: string | symbol, ...args: Array<unknown>) => boolean
http.Server.prototype.emit = function(this: http.Server, name: string | symbol, ...args: Array<unknown>) {
  if (name === "request") counts.requests++
  return emit.call(this, name, ...args)
} as typeof http.Server.prototype.emit

process.on("SIGUSR2", () => {
  const per = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Math.round((v / Math.max(1, counts.requests)) * 10) / 10]))
  process.stderr.write(`effect-count ${JSON.stringify(counts)} per request ${JSON.stringify(per)}\n`)
  for (const k of Object.keys(counts) as Array<keyof typeof counts>) counts[k] = 0
})
