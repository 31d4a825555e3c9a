import { createCheckpoint, type Checkpoint } from "./checkpoint.ts"
import { resolveOverlaps } from "./detectStructured.ts"
import type { Span } from "./types.ts"

/**
 * Long texts are given to the name library in windows so that it costs time proportional to the text (its
 * matcher grows faster than linearly with the length of what it is given) and so that the caller can
 * yield, check a deadline or give up between windows.
 *
 * The text is cut into consecutive "own" ranges that together cover it exactly once, cut after a line
 * break where possible, else after a sentence end, else at a space, else anywhere. Each window's "view"
 * adds up to `overlap` characters of context on both sides. Detection runs on the view and keeps only
 * the spans that start in the window's own range, so a value near a cut is seen whole by the window that
 * owns its start, and reported by that window only.
 */
export interface TextWindow {
  readonly viewStart: number
  readonly viewEnd: number
  readonly ownStart: number
  readonly ownEnd: number
}

export interface WindowOptions {
  /** Characters in a window's own range (at most). Default 8192. */
  readonly size?: number
  /** Characters of context on each side of the own range (at most). Default 512. */
  readonly overlap?: number
}

export const DEFAULT_WINDOW_SIZE = 8192
export const DEFAULT_WINDOW_OVERLAP = 512

const isSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0x0c
const isSentenceEnd = (code: number) => code === 0x2e || code === 0x21 || code === 0x3f // . ! ?
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * Where to end a range that must end after `floor` and at or before `limit`: just after the last line
 * break, else just after the last sentence end followed by a space, else just after the last space,
 * else at `limit` (never between the two halves of a surrogate pair).
 */
const cutPoint = (text: string, floor: number, limit: number): number => {
  let sentence = -1
  let space = -1
  for (let i = limit - 1; i > floor; i--) {
    const code = text.charCodeAt(i)
    if (code === 0x0a) return i + 1
    if (isSpace(code)) {
      if (sentence < 0 && isSentenceEnd(text.charCodeAt(i - 1))) sentence = i + 1
      if (space < 0) space = i + 1
    }
  }
  if (sentence > 0) return sentence
  if (space > 0) return space
  return limit < text.length && isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit
}

/** The first word start at or after `from` (and before `to`), else `from`: a view does not begin mid-word. */
const wordStartAfter = (text: string, from: number, to: number): number => {
  for (let i = from; i < to; i++) if (isSpace(text.charCodeAt(i))) return i + 1
  return from
}

/** The last word end at or before `from` (and after `to`), else `from`: a view does not end mid-word. */
const wordEndBefore = (text: string, from: number, to: number): number => {
  for (let i = from; i > to; i--) if (isSpace(text.charCodeAt(i - 1))) return i - 1
  return from
}

/** The windows covering `text`; one window (the whole text) when it is no longer than `size`. */
export const textWindows = (text: string, options: WindowOptions = {}): Array<TextWindow> => {
  const size = Math.max(2, options.size ?? DEFAULT_WINDOW_SIZE)
  const overlap = Math.max(0, options.overlap ?? DEFAULT_WINDOW_OVERLAP)
  const windows: Array<TextWindow> = []
  let ownStart = 0
  while (ownStart < text.length) {
    const limit = ownStart + size
    // Cut no earlier than half a window in, so a text full of line breaks still gets few, large windows.
    const ownEnd = limit >= text.length ? text.length : cutPoint(text, ownStart + (size >> 1), limit)
    const viewStart = ownStart === 0 ? 0 : wordStartAfter(text, Math.max(0, ownStart - overlap), ownStart)
    const viewEnd =
      ownEnd === text.length ? ownEnd : wordEndBefore(text, Math.min(text.length, ownEnd + overlap), ownEnd)
    windows.push({ viewStart, viewEnd, ownStart, ownEnd })
    ownStart = ownEnd
  }
  return windows
}

/**
 * Spans found in consecutive windows, in text order, made non-overlapping: where spans of neighbouring
 * windows overlap (a value near a cut seen differently from either side), `resolve` picks among that
 * group alone, so the whole pass stays linear in the number of spans.
 */
export const mergeWindowSpans = (
  spans: ReadonlyArray<Span>,
  resolve: (group: ReadonlyArray<Span>) => Array<Span>
): Array<Span> => {
  const ordered = [...spans].sort((a, b) => a.start - b.start || b.end - a.end)
  const out: Array<Span> = []
  let group: Array<Span> = []
  let groupEnd = -1
  for (const span of ordered) {
    if (group.length > 0 && span.start >= groupEnd) {
      out.push(...(group.length === 1 ? group : resolve(group)))
      group = []
    }
    group.push(span)
    groupEnd = Math.max(group.length === 1 ? span.end : groupEnd, span.end)
  }
  if (group.length > 0) out.push(...(group.length === 1 ? group : resolve(group)))
  return out
}

export interface ScanOptions {
  /** Aborting it stops the scan before its next window; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** Default: a new one on `signal` (yields to the event loop every 20 ms of work). */
  readonly checkpoint?: Checkpoint
  readonly windows?: WindowOptions
}

/**
 * Runs `scan` on every window of `text` and returns what it found, with offsets into `text`, in order and
 * without overlaps: each window keeps the spans that start in its own range. A window whose text and cut
 * positions were already scanned in this call (repeated text) is not scanned again. Before each window the
 * checkpoint stops on abort and yields to the event loop.
 */
export const scanInWindows = async (
  text: string,
  scan: (view: string) => ReadonlyArray<Span> | Promise<ReadonlyArray<Span>>,
  options: ScanOptions = {}
): Promise<Array<Span>> => {
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
      owned = (await scan(view)).filter((s) => s.start >= ownStart && s.start < ownEnd)
      seen.set(key, owned)
    }
    for (const s of owned) found.push({ start: s.start + w.viewStart, end: s.end + w.viewStart, type: s.type })
  }
  return mergeWindowSpans(found, resolveOverlaps)
}
