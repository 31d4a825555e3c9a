/**
 * Reads the structure of a text: which values sit under which label. A column header, a JSON or YAML
 * key, a `key=value` field or a form label ("Date of birth: ...") says what a value is as clearly as a
 * sentence does ("born on ..."), so detectors use it as a cue. Recognised:
 *  - delimited tables: two or more consecutive lines with the same number of cells (tab, semicolon or
 *    comma; quoted CSV cells), the first line being the header; markdown tables (`| a | b |`);
 *  - `"key": "value"` / `"key": 123` (JSON), `key: "value"` / `key: 'value'` (JS, YAML);
 *  - `key=value`, `key="value"` (logs, .env, keyword arguments);
 *  - `Label: value` (or `Label - value`) at the start of a line (forms, YAML, vCard `TEL;TYPE=cell:...`,
 *    mail headers).
 * Linear in the text: each line is read a bounded number of times.
 */

export interface Field {
  /** The label as written ("birth_date", "Date de naissance", "TEL;TYPE=cell"). */
  readonly label: string
  /** The value's range in the text (quotes and surrounding spaces excluded). */
  readonly start: number
  readonly end: number
}

interface Line {
  readonly text: string
  readonly start: number
}

const linesOf = (text: string): Array<Line> => {
  const lines: Array<Line> = []
  let at = 0
  for (;;) {
    const nl = text.indexOf("\n", at)
    const end = nl === -1 ? text.length : nl
    const raw = text.slice(at, end)
    lines.push({ text: raw.endsWith("\r") ? raw.slice(0, -1) : raw, start: at })
    if (nl === -1) return lines
    at = nl + 1
  }
}

interface Cell {
  readonly text: string
  readonly start: number
  readonly end: number
}

/** Splits one line into cells on `sep`, honouring double-quoted CSV cells; ranges exclude quotes and spaces. */
const cellsOf = (line: Line, sep: string): Array<Cell> => {
  const cells: Array<Cell> = []
  const s = line.text
  let i = 0
  for (;;) {
    let start = i
    let end: number
    let next: number
    while (start < s.length && s[start] === " ") start++
    if (s[start] === '"') {
      let j = start + 1
      while (j < s.length && !(s[j] === '"' && s[j + 1] !== '"')) j += s[j] === '"' ? 2 : 1
      const close = s.indexOf(sep, j)
      next = close === -1 ? s.length : close
      start += 1
      end = Math.min(j, s.length)
    } else {
      const close = s.indexOf(sep, i)
      next = close === -1 ? s.length : close
      end = next
      while (end > start && s[end - 1] === " ") end--
    }
    cells.push({ text: s.slice(start, end), start: line.start + start, end: line.start + end })
    if (next >= s.length) return cells
    i = next + sep.length
  }
}

const markdownCells = (line: Line): Array<Cell> | undefined => {
  const t = line.text.trim()
  if (!t.startsWith("|") || !t.endsWith("|") || t.length < 3) return undefined
  const offset = line.text.indexOf("|")
  const inner: Line = { text: line.text.slice(offset + 1, line.text.lastIndexOf("|")), start: line.start + offset + 1 }
  return cellsOf(inner, "|").map((c) => {
    const lead = c.text.length - c.text.trimStart().length
    const v = c.text.trim()
    return { text: v, start: c.start + lead, end: c.start + lead + v.length }
  })
}

const isMarkdownRule = (cells: ReadonlyArray<Cell>): boolean => cells.every((c) => /^:?-{2,}:?$/.test(c.text))

/**
 * A header cell names a column: present, short, not a value (no "@", not mostly digits) and not itself a
 * key/value pair (pretty-printed JSON lines end in commas too: `"name": "Ann",`).
 */
const looksLikeHeader = (cells: ReadonlyArray<Cell>): boolean =>
  cells.every((c) => c.text.length > 0 && c.text.length <= 48 && !/[@:={}[\]]/.test(c.text) && (c.text.match(/\d/g)?.length ?? 0) <= 2) &&
  cells.some((c) => /\p{L}/u.test(c.text))

const SEPARATORS = ["\t", ";", ","] as const

/** Fields of the tables in `lines`; marks the lines that belong to a table. */
const readTables = (lines: ReadonlyArray<Line>, inTable: Array<boolean>, out: Array<Field>): void => {
  let i = 0
  while (i < lines.length - 1) {
    const header = lines[i]!
    let matched = false
    // Markdown first: its cells are unambiguous.
    const mdHeader = markdownCells(header)
    if (mdHeader !== undefined && mdHeader.length >= 2 && looksLikeHeader(mdHeader)) {
      let j = i + 1
      const rows: Array<Array<Cell>> = []
      for (; j < lines.length; j++) {
        const cells = markdownCells(lines[j]!)
        if (cells === undefined || cells.length !== mdHeader.length) break
        if (!isMarkdownRule(cells)) rows.push(cells)
      }
      if (rows.length > 0) {
        for (const row of rows) row.forEach((c, k) => c.end > c.start && out.push({ label: mdHeader[k]!.text, start: c.start, end: c.end }))
        for (let k = i; k < j; k++) inTable[k] = true
        i = j
        matched = true
      }
    }
    if (!matched) {
      for (const sep of SEPARATORS) {
        if (!header.text.includes(sep)) continue
        const head = cellsOf(header, sep)
        if (head.length < 2 || !looksLikeHeader(head)) continue
        let j = i + 1
        while (j < lines.length && lines[j]!.text.includes(sep) && cellsOf(lines[j]!, sep).length === head.length) j++
        if (j === i + 1) continue
        for (let k = i + 1; k < j; k++) {
          cellsOf(lines[k]!, sep).forEach((c, n) => c.end > c.start && out.push({ label: head[n]!.text, start: c.start, end: c.end }))
        }
        for (let k = i; k < j; k++) inTable[k] = true
        i = j
        matched = true
        break
      }
    }
    if (!matched) i++
  }
}

const JSON_PAIR = /"([^"\n]{1,60})"\s*:\s*(?:"((?:[^"\\\n]|\\.)*)"|(-?\d[\d.]*))/gu
const QUOTED_VALUE = /(?<![\p{L}\p{N}_"'])([\p{L}_][\p{L}\p{N}_]{0,40})\s*:\s*(["'])([^\n]*?)\2/gu
const KEY_EQUALS = /(?<![\p{L}\p{N}_.\-])([\p{L}_][\p{L}\p{N}_.\-]{0,40})=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s,;&"')]+))/gu
// A form label is a few words ("Date of birth", "N° de passeport", "Tel. (mobile)"), not a sentence.
const LINE_LABEL = /^[ \t]*(?:-[ \t]+)?(\p{L}[\p{L}\p{M}\p{N}_.'’()\/#°º\-]*(?: [\p{L}\p{M}\p{N}_.'’()\/#°º\-]+){0,4}?)[ \t]*(?:[:：]|[ \t]-[ \t])[ \t]*(\S[^\n]*?)[ \t]*$/u
const VCARD_LABEL = /^([A-Z][A-Z-]*(?:;[^:\n]*)?):(\S[^\n]*?)\s*$/

/** Values longer than this are running text, not a field's value. */
const MAX_VALUE = 240

const pushValue = (out: Array<Field>, label: string, start: number, value: string): void => {
  const lead = value.length - value.trimStart().length
  const v = value.trim()
  if (v !== "" && v.length <= MAX_VALUE) out.push({ label, start: start + lead, end: start + lead + v.length })
}

/** Fields of one line that is not part of a table. */
const readLine = (line: Line, out: Array<Field>): void => {
  const before = out.length
  const s = line.text
  // vCard properties carry parameters with "=" ("TEL;TYPE=cell:+49 ..."): the property is the label.
  const vcard = VCARD_LABEL.exec(s)
  if (vcard !== null && vcard[1]!.includes(";")) {
    pushValue(out, vcard[1]!, line.start + s.length - (s.length - s.trimEnd().length) - vcard[2]!.length, vcard[2]!)
    return
  }
  if (s.includes('"') && s.includes(":")) {
    for (const m of s.matchAll(JSON_PAIR)) {
      const value = m[2] ?? m[3]!
      const at = m.index + m[0].length - value.length - (m[2] !== undefined ? 1 : 0)
      pushValue(out, m[1]!, line.start + at, value)
    }
  }
  if (out.length === before && (s.includes('"') || s.includes("'")) && s.includes(":")) {
    for (const m of s.matchAll(QUOTED_VALUE)) pushValue(out, m[1]!, line.start + m.index + m[0].length - 1 - m[3]!.length, m[3]!)
  }
  if (s.includes("=")) {
    for (const m of s.matchAll(KEY_EQUALS)) {
      const value = m[2] ?? m[3] ?? m[4]!
      const quoted = m[2] !== undefined || m[3] !== undefined
      pushValue(out, m[1]!, line.start + m.index + m[0].length - value.length - (quoted ? 1 : 0), value)
    }
  }
  if (out.length === before && (s.includes(":") || s.includes("：") || s.includes(" - "))) {
    const m = VCARD_LABEL.exec(s) ?? LINE_LABEL.exec(s)
    if (m !== null && !m[2]!.startsWith("//")) {
      let value = m[2]!
      let at = s.length - (s.length - s.trimEnd().length) - value.length
      if (/^(["']).*\1$/.test(value) && value.length >= 2) {
        value = value.slice(1, -1)
        at += 1
      }
      pushValue(out, m[1]!, line.start + at, value)
    }
  }
}

let memoText: string | undefined
let memoFields: ReadonlyArray<Field> = []

/** Every labelled value of `text`, in text order. Remembers the last text read (detectors ask in turn). */
export const fieldsOf = (text: string): ReadonlyArray<Field> => {
  if (text === memoText) return memoFields
  const lines = linesOf(text)
  const inTable = new Array<boolean>(lines.length).fill(false)
  const fields: Array<Field> = []
  if (text.includes("\n")) readTables(lines, inTable, fields)
  lines.forEach((line, i) => {
    if (!inTable[i] && line.text.length > 0) readLine(line, fields)
  })
  fields.sort((a, b) => a.start - b.start)
  memoText = text
  memoFields = fields
  return fields
}

/** The field whose value contains [start, end), if any. */
export const fieldAt = (text: string, start: number, end: number = start + 1): Field | undefined => {
  const fields = fieldsOf(text)
  let lo = 0
  let hi = fields.length - 1
  let last = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (fields[mid]!.start <= start) {
      last = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  // Fields of one line may nest (a key=value inside a form value): look back a few for one that contains the range.
  for (let k = last; k >= 0 && k >= last - 4; k--) {
    const f = fields[k]!
    if (f.start <= start && f.end >= end) return f
  }
  return undefined
}
