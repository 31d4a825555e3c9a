import { detectStructured, resolveOverlaps } from "./detectStructured.ts"
import { NameModelUnavailable } from "./NameModel.ts"
import type { TokeniserSession } from "./session.ts"
import type { Span } from "./types.ts"

/** Names from the session's model; fails closed (NameModelUnavailable) unless the session is fail-open. */
const detectNames = async (text: string, session: TokeniserSession): Promise<ReadonlyArray<Span>> => {
  if (session.names === "off") return []
  try {
    const spans = await session.names.detect(text)
    return spans.filter((s) => s.start >= 0 && s.end <= text.length && s.end > s.start)
  } catch (cause) {
    if (session.failOpen) {
      session.markNameModelSkipped()
      return []
    }
    throw cause instanceof NameModelUnavailable
      ? cause
      : new NameModelUnavailable("name model failed; nothing was sent", cause)
  }
}

/** Every value the session's detectors and name model find in `text`, non-overlapping, in text order. */
export const detectSpans = async (text: string, session: TokeniserSession): Promise<Array<Span>> => {
  const structured = detectStructured(text, session.detectors)
  const names = await detectNames(text, session)
  return resolveOverlaps([...structured, ...names.map((s) => ({ start: s.start, end: s.end, type: "PERSON" as const }))])
}

/**
 * Replaces every detected value in `text` with its alias in `session`. The same value gets the same
 * alias everywhere in the session (one request).
 */
export const tokeniseText = async (text: string, session: TokeniserSession): Promise<string> => {
  session.observe(text)
  if (text.length === 0) return text
  const spans = await detectSpans(text, session)
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
