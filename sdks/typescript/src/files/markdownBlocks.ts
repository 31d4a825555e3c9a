/**
 * A model's markdown answer as blocks (headings, paragraphs, list items, tables, code), and inline spans (bold,
 * italic, code): the common ground of the .html and .docx writers. Enough markdown for documents, not all of
 * CommonMark: links keep their text and target as written, nested block quotes are paragraphs.
 */
export type Block =
  | { readonly kind: "heading"; readonly level: number; readonly text: string }
  | { readonly kind: "paragraph"; readonly text: string }
  | { readonly kind: "listItem"; readonly ordered: boolean; readonly level: number; readonly text: string }
  | { readonly kind: "table"; readonly rows: ReadonlyArray<ReadonlyArray<string>> }
  | { readonly kind: "code"; readonly text: string }

export interface Span {
  readonly text: string
  readonly bold: boolean
  readonly italic: boolean
  readonly code: boolean
}

const SEPARATOR_ROW = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/

/** The cells of one markdown table row (`\|` is a pipe inside a cell, `<br>` a line break). */
export const tableCells = (line: string): Array<string> => {
  const inner = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "")
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|").replace(/<br\s*\/?>/gi, "\n"))
}

export const markdownBlocks = (markdown: string): Array<Block> => {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n")
  const blocks: Array<Block> = []
  let paragraph: Array<string> = []
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: paragraph.join("\n") })
    paragraph = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const fence = /^\s*(```|~~~)/.exec(line)
    if (fence !== null) {
      flush()
      const code: Array<string> = []
      for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence[1]!); i++) code.push(lines[i]!)
      blocks.push({ kind: "code", text: code.join("\n") })
      continue
    }
    if (line.trim() === "") {
      flush()
      continue
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading !== null) {
      flush()
      blocks.push({ kind: "heading", level: heading[1]!.length, text: heading[2]! })
      continue
    }
    if (line.includes("|") && i + 1 < lines.length && SEPARATOR_ROW.test(lines[i + 1]!)) {
      flush()
      const rows = [tableCells(line)]
      for (i += 2; i < lines.length && lines[i]!.includes("|") && lines[i]!.trim() !== ""; i++) rows.push(tableCells(lines[i]!))
      i--
      blocks.push({ kind: "table", rows })
      continue
    }
    const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line)
    if (item !== null) {
      flush()
      blocks.push({ kind: "listItem", ordered: /\d/.test(item[2]!), level: Math.floor(item[1]!.replace(/\t/g, "  ").length / 2), text: item[3]! })
      continue
    }
    paragraph.push(line.replace(/^>\s?/, ""))
  }
  flush()
  return blocks
}

/** Inline spans: `**bold**`, `__bold__`, `*italic*`, `_italic_`, `` `code` ``. */
export const inlineSpans = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  // Underscores mark emphasis only at word edges, so snake_case names and aliases (<PERSON_1_k3f9>) stay text.
  const pattern = /(\*\*|(?<!\w)__)(.+?)(?:\*\*|__(?!\w))|(\*|(?<!\w)_)(?!\s)(.+?)(?<!\s)(?:\*|_(?!\w))|`([^`]+)`/g
  let at = 0
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) spans.push({ text: text.slice(at, m.index), bold: false, italic: false, code: false })
    if (m[2] !== undefined) spans.push({ text: m[2], bold: true, italic: false, code: false })
    else if (m[4] !== undefined) spans.push({ text: m[4], bold: false, italic: true, code: false })
    else spans.push({ text: m[5]!, bold: false, italic: false, code: true })
    at = m.index + m[0].length
  }
  if (at < text.length) spans.push({ text: text.slice(at), bold: false, italic: false, code: false })
  return spans
}
