/**
 * Plain text, markdown and CSV. Text must be UTF-8 (a byte-order mark is dropped); markdown is passed on as it is,
 * with its headings noted; CSV (comma, semicolon or tab, RFC 4180 quoting) becomes a markdown table.
 */
import { FileError } from "./FileError.ts"
import { markdownTable } from "./markdown.ts"
import type { FileHeading, ReaderOutput } from "./types.ts"

export const decodeUtf8 = (bytes: Uint8Array, what: string): string => {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch (error) {
    throw new FileError("file_malformed", `The ${what} is not UTF-8 text.`, error)
  }
}

const EMPTY = { headings: [], tables: 0, listItems: 0, parts: [] }

export const readPlainText = (bytes: Uint8Array): ReaderOutput => ({ text: decodeUtf8(bytes, "text file").replace(/\r\n?/g, "\n"), structure: EMPTY })

export const readMarkdown = (bytes: Uint8Array): ReaderOutput => {
  const text = decodeUtf8(bytes, "markdown file").replace(/\r\n?/g, "\n")
  const headings: Array<FileHeading> = []
  let listItems = 0
  let tables = 0
  let fenced = false
  let previous = ""
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    if (fenced) continue
    const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line)
    if (h !== null) headings.push({ level: h[1]!.length, text: h[2]! })
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) listItems++
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line) && previous.includes("|")) tables++
    previous = line
  }
  return { text, structure: { headings, tables, listItems, parts: [] } }
}

/** Rows of a CSV text; the delimiter is the one of `,` `;` and tab found most in the first line. */
export const parseCsv = (text: string): Array<Array<string>> => {
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? text.length : text.indexOf("\n"))
  const delimiter = [",", ";", "\t"].map((d) => [d, firstLine.split(d).length] as const).sort((a, b) => b[1] - a[1])[0]![0]
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i++
        } else quoted = false
      } else field += c
    } else if (c === '"' && field === "") quoted = true
    else if (c === delimiter) {
      row.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      row.push(field)
      rows.push(row)
      row = []
      field = ""
    } else field += c
  }
  if (quoted) throw new FileError("file_malformed", "The CSV file ends inside a quoted field.")
  if (field !== "" || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}

export const readCsv = (bytes: Uint8Array): ReaderOutput => {
  const rows = parseCsv(decodeUtf8(bytes, "CSV file"))
  return { text: markdownTable(rows), structure: { headings: [], tables: rows.length > 0 ? 1 : 0, listItems: 0, parts: [] } }
}
