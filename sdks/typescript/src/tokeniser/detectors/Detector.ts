import type { Span, StructuredType } from "../types.ts"
import { withGlobalRegex } from "./reusedRegex.ts"

/** A deterministic detector: finds candidates by shape and keeps only those that pass validation. */
export interface Detector {
  readonly type: StructuredType
  readonly detect: (text: string) => ReadonlyArray<Span>
}

/** Runs a global regex and turns each validated match into a span of `type`. */
export const spansFromRegex = (
  text: string,
  pattern: RegExp,
  type: StructuredType,
  accept: (match: RegExpExecArray) => { start: number; end: number } | undefined
): Array<Span> => {
  const spans: Array<Span> = []
  withGlobalRegex(pattern, (regex) => {
    for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
      if (m[0].length === 0) {
        regex.lastIndex++
        continue
      }
      const range = accept(m)
      if (range !== undefined) spans.push({ start: range.start, end: range.end, type })
    }
  })
  return spans
}
