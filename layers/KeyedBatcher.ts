import { Deferred, Effect, Exit } from "effect"

/**
 * Per-key write coalescing: items submitted under one key queue on at most one worker fiber for that key, which
 * hands whatever has queued up (at most `maxBatch`) to `run` as one batch, then the next batch, then goes away until
 * the next item. So N concurrent callers cost one round trip per batch instead of N, with no timer and no added
 * latency for a lone caller (its batch starts at once).
 *
 * Must be built in a layer: the workers run with the layer's services, never a caller's
 * (a caller's open SQL transaction must not leak into a batch). A caller that is interrupted does not cancel its
 * item: once submitted, it is written (a settlement must not be lost because its client went away), and closing the
 * layer waits until every queued item is written.
 */
export const makeKeyedBatcher = <I, O>(options: {
  readonly maxBatch: number
  /** Writes one batch; answers one Exit per item, in order. A batch that fails answers every item with its cause. */
  readonly run: (key: string, items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<Exit.Exit<O>>>
}) =>
  Effect.gen(function*() {
    const layerContext = yield* Effect.context<never>()
    const queues = new Map<string, Array<{ readonly item: I; readonly reply: Deferred.Deferred<O> }>>()
    /** Items submitted and not yet answered (waiting in a queue or in the batch being written). */
    let pending = 0
    /** Completed when the last queue empties, for a closing layer that waits for its writes. */
    let allWritten: Deferred.Deferred<void> | undefined

    // Closing the layer (shutdown) waits until everything queued has been written. The workers are not fibers of
    // the layer's scope: one forked into a scope that is already closing could be interrupted before its first
    // step and leave its callers waiting for ever; this wait is what ties them to the layer's lifetime instead.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        if (queues.size === 0) return Effect.void
        allWritten ??= Deferred.makeUnsafe<void>()
        return Deferred.await(allWritten)
      })
    )

    const drain = (key: string, queue: Array<{ readonly item: I; readonly reply: Deferred.Deferred<O> }>): Effect.Effect<void> =>
      Effect.suspend(() => {
        const batch = queue.splice(0, options.maxBatch)
        if (batch.length === 0) {
          queues.delete(key)
          if (queues.size === 0 && allWritten !== undefined) {
            Deferred.doneUnsafe(allWritten, Exit.void)
            allWritten = undefined
          }
          return Effect.void
        }
        return options.run(key, batch.map((b) => b.item)).pipe(
          Effect.exit,
          Effect.map((exit) => {
            pending -= batch.length
            batch.forEach((b, i) =>
              Deferred.doneUnsafe(
                b.reply,
                Exit.isSuccess(exit) ? exit.value[i] ?? Exit.die(new Error("batch answered too few items")) : exit as Exit.Exit<never>
              )
            )
          }),
          Effect.andThen(drain(key, queue))
        )
      })

    const submit = (key: string, item: I): Effect.Effect<O> =>
      Effect.suspend(() => {
        const entry = { item, reply: Deferred.makeUnsafe<O>() }
        pending++
        const queue = queues.get(key)
        if (queue !== undefined) {
          queue.push(entry)
          return Deferred.await(entry.reply)
        }
        const fresh = [entry]
        queues.set(key, fresh)
        // Detached and uninterruptible: nothing can stop a worker before its queue is empty, so no caller is left
        // waiting for an answer; the layer's finalizer above waits for it.
        return Effect.forkDetach(Effect.uninterruptible(Effect.provideContext(drain(key, fresh), layerContext))).pipe(
          Effect.andThen(Deferred.await(entry.reply))
        )
      })
    /** True while a batch for `key` is being written or waits: a caller may then prefer to queue behind it. */
    const busy = (key: string) => queues.has(key)
    /** How much work is in the batcher now: items not yet answered, and keys with a worker (a queue). */
    const stats = () => ({ pending, activeKeys: queues.size })
    return { submit, busy, stats }
  })
