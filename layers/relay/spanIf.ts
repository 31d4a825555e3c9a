import { Effect } from "effect"

/** A span only for a sampled request: building one (stack capture, attributes) costs every call that is not exported. */
export const spanIf = (sampled: boolean, name: string, attributes?: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    sampled ? Effect.withSpan(effect, name, attributes === undefined ? undefined : { attributes }) : effect
