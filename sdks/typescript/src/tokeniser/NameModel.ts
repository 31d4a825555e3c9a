import type { Span } from "./types.ts"

/**
 * A service that finds free-form personal names. Implementations: the built-in on-device model
 * (`builtinNameModel`, the portable name model), the opt-in `compromiseNameModel` (the built-in model plus the
 * compromise library) and an HTTP model endpoint (`httpNameModel`). Any rejection means
 * "unavailable": the tokeniser then fails closed unless the caller opted into fail-open.
 */
export interface NameModel {
  /**
   * PERSON spans in `text`. The engine calls it once per window of a long text (a few KB). An aborted
   * `signal` means the caller has given up: stop as soon as possible.
   */
  readonly detect: (text: string, options?: NameModelCallOptions) => Promise<ReadonlyArray<Span>>
}

export interface NameModelCallOptions {
  readonly signal?: AbortSignal
}

/** Names were enabled but the model could not answer: nothing may be sent. */
export class NameModelUnavailable extends Error {
  readonly _tag = "NameModelUnavailable"
  override readonly cause: unknown
  constructor(message: string, cause?: unknown) {
    super(message)
    this.name = "NameModelUnavailable"
    this.cause = cause
  }
}
