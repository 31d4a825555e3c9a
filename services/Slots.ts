import { Context, Effect } from "effect"

/**
 * Short-lived exclusive slots with expiry, shared across nodes (Redis) or in one process (memory):
 * the in-flight marker of an idempotent request, a lock for a job.
 */
export class Slots extends Context.Service<Slots, {
  /** Takes the slot for `owner` unless someone holds it; true when taken. */
  readonly acquire: (key: string, owner: string, ttlMs: number) => Effect.Effect<boolean>
  /** Extends the slot's expiry to `ttlMs` from now only if `owner` still holds it; true when it did. */
  readonly renew: (key: string, owner: string, ttlMs: number) => Effect.Effect<boolean>
  /** Releases the slot only if `owner` still holds it. */
  readonly release: (key: string, owner: string) => Effect.Effect<void>
  readonly holder: (key: string) => Effect.Effect<string | undefined>
}>()("privacy-relay/Slots") {}
