import { Effect, Semaphore } from "effect"

/**
 * One serialiser per tenant (docs/relay.md): effects for the same key run one at a time, in arrival order,
 * on the CALLER's fiber. A queue-and-worker actor would run the job on the worker's fiber, which cannot see the
 * caller's open SQL transaction (the connection is fiber-local), so the receipt could not commit together with the
 * debit; a per-key semaphore gives the same ordering without moving the work. Entries are created on demand and
 * dropped as soon as nobody holds or waits for them (idle eviction without a timer).
 */
export const makeTenantSerialiser = () => {
  const entries = new Map<string, { readonly lock: Semaphore.Semaphore; users: number }>()
  return <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let entry = entries.get(key)
      if (entry === undefined) {
        entry = { lock: Semaphore.makeUnsafe(1), users: 0 }
        entries.set(key, entry)
      }
      const held = entry
      held.users++
      return held.lock.withPermits(1)(effect).pipe(
        Effect.ensuring(Effect.sync(() => {
          held.users--
          if (held.users === 0 && entries.get(key) === held) entries.delete(key)
        }))
      )
    })
}
