import { createCheckpoint, type Checkpoint } from "./checkpoint.ts"
import { detectStructured, resolveOverlaps } from "./detectStructured.ts"
import { NameModelUnavailable } from "./NameModel.ts"
import type { TokeniserSession } from "./session.ts"
import { mergeWindowSpans, textWindows, type WindowOptions } from "./textWindows.ts"
import type { Span } from "./types.ts"

export interface DetectOptions {
  /** Aborting it stops the work at the next checkpoint; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** Shared by every text of one request, so yields are paced across the request; default: a new one. */
  readonly checkpoint?: Checkpoint
  /** Window sizes (tests use small ones to put cuts where they want them). */
  readonly windows?: WindowOptions
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
 * PERSON spans in `text`, window by window (textWindows.ts): the name library's matcher costs more than
 * linearly in the length of what it is given, so it only ever sees a few KB. A window whose text and cut
 * positions were already scanned in this call (repeated text) is not scanned again. Before each window the
 * checkpoint stops on abort and yields to the event loop.
 */
const detectNamesInWindows = async (
  text: string,
  session: TokeniserSession,
  options: DetectOptions,
  checkpoint: Checkpoint
): Promise<Array<Span>> => {
  if (session.names === "off") return []
  const seen = new Map<string, ReadonlyArray<Span>>()
  const found: Array<Span> = []
  for (const w of textWindows(text, options.windows)) {
    await checkpoint()
    const view = text.slice(w.viewStart, w.viewEnd)
    const ownStart = w.ownStart - w.viewStart
    const ownEnd = w.ownEnd - w.viewStart
    const key = `${ownStart}:${ownEnd}:${view}`
    let owned = seen.get(key)
    if (owned === undefined) {
      owned = (await detectNames(view, session, options.signal)).filter((s) => s.start >= ownStart && s.start < ownEnd)
      seen.set(key, owned)
    }
    for (const s of owned) found.push({ start: s.start + w.viewStart, end: s.end + w.viewStart, type: "PERSON" })
  }
  return mergeWindowSpans(found, resolveOverlaps)
}

/**
 * Every value the session's detectors and name model find in `text`, non-overlapping, in text order. The
 * structured detectors read the whole text at once: they are linear in it, and a table's header, a JSON key
 * or a form label is a cue for values far below it. Names are found window by window.
 */
export const detectSpans = async (text: string, session: TokeniserSession, options: DetectOptions = {}): Promise<Array<Span>> => {
  const checkpoint = options.checkpoint ?? createCheckpoint(options.signal)
  await checkpoint()
  const structured = detectStructured(text, session.detectors)
  const names = await detectNamesInWindows(text, session, options, checkpoint)
  return resolveOverlaps([...structured, ...names])
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
