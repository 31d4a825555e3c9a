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

/** Every value found in `view`, non-overlapping, offsets relative to `view`. */
const detectInView = async (view: string, session: TokeniserSession, signal?: AbortSignal): Promise<Array<Span>> => {
  const structured = detectStructured(view, session.detectors)
  const names = await detectNames(view, session, signal)
  return resolveOverlaps([...structured, ...names.map((s) => ({ start: s.start, end: s.end, type: "PERSON" as const }))])
}

/**
 * Every value the session's detectors and name model find in `text`, non-overlapping, in text order.
 * Long texts are scanned window by window (textWindows.ts), so the cost grows linearly with the length;
 * a window whose text and cut positions were already scanned in this call (repeated text) is not
 * scanned again. Between windows the checkpoint stops on abort and yields to the event loop.
 */
export const detectSpans = async (text: string, session: TokeniserSession, options: DetectOptions = {}): Promise<Array<Span>> => {
  const checkpoint = options.checkpoint ?? createCheckpoint(options.signal)
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
      owned = (await detectInView(view, session, options.signal)).filter((s) => s.start >= ownStart && s.start < ownEnd)
      seen.set(key, owned)
    }
    for (const s of owned) found.push({ start: s.start + w.viewStart, end: s.end + w.viewStart, type: s.type })
  }
  return mergeWindowSpans(found, resolveOverlaps)
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
