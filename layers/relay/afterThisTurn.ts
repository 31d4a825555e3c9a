import { Effect } from "effect"

/**
 * Runs `effect` once the current turn's synchronous work is done (on `process.nextTick`), whole (uninterruptible) and
 * with the caller's services, and returns at once.
 *
 * Why: a buffered relay answer is written to the client's socket in the same synchronous run that resumes the call
 * from its settlement (the sealing writer answers it from the statement's reply, and nothing on the way to the
 * socket waits). Work that need not precede the answer, such as returning the call's admission (its Redis script),
 * goes after the write this way instead of before it, and still before the event loop reads anything else: no
 * request, in this process or from the client that was just answered, is read before it has run.
 */
export const afterThisTurn = <R>(effect: Effect.Effect<void, never, R>): Effect.Effect<void, never, R> =>
  Effect.flatMap(Effect.context<R>(), (context) =>
    Effect.sync(() => {
      process.nextTick(() => {
        Effect.runForkWith(context)(effect, { uninterruptible: true })
      })
    }))
