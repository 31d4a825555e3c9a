import { createCheckpoint, type Checkpoint } from "./checkpoint.ts"
import { detectStructured, resolveOverlaps } from "./detectStructured.ts"
import { NameModelUnavailable } from "./NameModel.ts"
import type { TokeniserSession } from "./session.ts"
import type { Span } from "./types.ts"

export interface DetectOptions {
  /** Aborting it stops the work at the next checkpoint; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** Shared by every text of one request, so yields are paced across the request; default: a new one. */
  readonly checkpoint?: Checkpoint
}

/** Names from the session's model; fails closed (NameModelUnavailable) unless the session is fail-open. */
const detectNames = async (text: string, session: TokeniserSession, signal?: AbortSignal): Promise<ReadonlyArray<Span>> => {
  if (session.names === "off") return []
  try {
    const spans = await session.names.detect(text, { signal })
    return spans.filter((s) => s.start >= 0 && s.end <= text.length && s.end > s.start)
  } catch (cause) {
    // Given up on purpose (client gone, time budget spent): that is not a model failure.
    if (signal?.aborted) throw signal.reason
    if (session.failOpen) {
      session.markNameModelSkipped()
      return []
    }
    throw cause instanceof NameModelUnavailable
      ? cause
      : new NameModelUnavailable("name model failed; nothing was sent", cause)
  }
}

/**
 * Every value the session's detectors and name model find in `text`, non-overlapping, in text order. Both
 * read the whole text: a table's header, a JSON key or a form label is a cue for values far below it. The
 * built-in name model gives its library windows of the text itself (builtinNameModel.ts), and stops
 * between them when `signal` is aborted.
 */
export const detectSpans = async (text: string, session: TokeniserSession, options: DetectOptions = {}): Promise<Array<Span>> => {
  const checkpoint = options.checkpoint ?? createCheckpoint(options.signal)
  await checkpoint()
  const structured = detectStructured(text, session.detectors)
  await checkpoint()
  const names = await detectNames(text, session, options.signal)
  await checkpoint()
  return resolveOverlaps([...structured, ...names.map((s) => ({ start: s.start, end: s.end, type: "PERSON" as const }))])
}

/**
 * Replaces every detected value in `text` with its alias in `session`. The same value gets the same
 * alias everywhere in the session (one request).
 */
export const tokeniseText = async (text: string, session: TokeniserSession, options: DetectOptions = {}): Promise<string> => {
  session.observe(text)
  if (text.length === 0) return text
  const spans = await detectSpans(text, session, options)
  let out = ""
  let at = 0
  for (const span of spans) {
    out += text.slice(at, span.start)
    out += await session.aliasFor(span.type, text.slice(span.start, span.end))
    session.countFired(span.type)
    at = span.end
  }
  return out + text.slice(at)
}
