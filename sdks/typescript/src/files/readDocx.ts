/**
 * .docx: the WordprocessingML parts of the package read in order: the body (headings from paragraph styles, list
 * items from numbering, tables as markdown tables, text boxes), then headers, footers, footnotes, endnotes and
 * comments (with their authors: names the model should see only as aliases). Deleted text of tracked changes and
 * field instructions are left out; they are not part of what the document says.
 */
import { FileError } from "./FileError.ts"
import type { FileLimits } from "./limits.ts"
import { markdownTable } from "./markdown.ts"
import type { FileHeading, ReaderOptions, ReaderOutput } from "./types.ts"
import { readRelationships, walkXml } from "./xml.ts"
import { openZip, relsOf, resolvePart, type ZipPackage } from "./zip.ts"

const MAIN = "word/document.xml"

/** The parts besides the body, in the order they are rendered, by relationship type suffix. */
const SIDE_PARTS: ReadonlyArray<{ readonly type: string; readonly title: string; readonly key: string }> = [
  { type: "/header", title: "Headers", key: "headers" },
  { type: "/footer", title: "Footers", key: "footers" },
  { type: "/footnotes", title: "Footnotes", key: "footnotes" },
  { type: "/endnotes", title: "Endnotes", key: "endnotes" },
  { type: "/comments", title: "Comments", key: "comments" }
]

/** The anchor of a paragraph: the part's file name without its extension, and the paragraph's index in it. */
export const partKey = (part: string): string => part.slice(part.lastIndexOf("/") + 1).replace(/\.xml$/, "")
export const anchor = (part: string, index: number): string => `⟦${partKey(part)}/${index}⟧`

interface Styles {
  readonly headingLevel: (styleId: string | undefined) => number | undefined
}

const readStyles = (zip: ZipPackage): Styles => {
  const names = new Map<string, string>()
  const xml = zip.text("word/styles.xml")
  if (xml !== undefined) {
    let current: string | undefined
    walkXml(xml, "styles", {
      open: (name, a) => {
        if (name === "w:style") current = a["w:styleId"]
        else if (name === "w:name" && current !== undefined) names.set(current, a["w:val"] ?? "")
      }
    })
  }
  const levelOf = (value: string): number | undefined => {
    if (/^(title)$/i.test(value)) return 1
    const m = /^heading\s*([1-6])$/i.exec(value)
    return m === null ? undefined : Number(m[1])
  }
  return { headingLevel: (id) => (id === undefined ? undefined : levelOf(id) ?? levelOf(names.get(id) ?? "")) }
}

/** numId -> (level -> is it a bullet list). */
const readNumbering = (zip: ZipPackage): ((numId: string, level: number) => boolean) => {
  const xml = zip.text("word/numbering.xml")
  const abstractBullets = new Map<string, Map<number, boolean>>()
  const numToAbstract = new Map<string, string>()
  if (xml !== undefined) {
    let abstract: string | undefined
    let level = 0
    let num: string | undefined
    walkXml(xml, "numbering", {
      open: (name, a) => {
        if (name === "w:abstractNum") abstract = a["w:abstractNumId"]
        else if (name === "w:lvl") level = Number(a["w:ilvl"] ?? 0)
        else if (name === "w:numFmt" && abstract !== undefined) {
          const levels = abstractBullets.get(abstract) ?? new Map<number, boolean>()
          levels.set(level, a["w:val"] === "bullet")
          abstractBullets.set(abstract, levels)
        } else if (name === "w:num") num = a["w:numId"]
        else if (name === "w:abstractNumId" && num !== undefined) numToAbstract.set(num, a["w:val"] ?? "")
      },
      close: (name) => {
        if (name === "w:abstractNum") abstract = undefined
        if (name === "w:num") num = undefined
      }
    })
  }
  return (numId, level) => abstractBullets.get(numToAbstract.get(numId) ?? "")?.get(level) ?? true
}

interface Paragraph {
  text: string
  style: string | undefined
  numId: string | undefined
  level: number
  readonly index: number
}

interface Table {
  readonly rows: Array<Array<string>>
  row: Array<string> | undefined
  cell: Array<string> | undefined
}

interface PartOutput {
  readonly blocks: Array<string>
  readonly headings: Array<FileHeading>
  tables: number
  listItems: number
}

/**
 * One WordprocessingML part as markdown blocks. Paragraphs are counted in document order (every `w:p`, those in
 * tables and text boxes included): the round-trip writer counts them the same way.
 */
const readPart = (xml: string, part: string, styles: Styles, isBullet: (numId: string, level: number) => boolean, options: ReaderOptions): PartOutput => {
  const out: PartOutput = { blocks: [], headings: [], tables: 0, listItems: 0 }
  const paragraphs: Array<Paragraph> = []
  const tables: Array<Table> = []
  let paragraphCount = 0
  let inText = false
  let runDepth = 0
  let comment: string | undefined
  const numbers = new Map<string, number>()

  const emit = (block: string) => {
    const table = tables.at(-1)
    if (table?.cell !== undefined) table.cell.push(block)
    else out.blocks.push(block)
  }

  walkXml(xml, part, {
    open: (name, a, selfClosing) => {
      switch (name) {
        case "w:p":
          paragraphs.push({ text: "", style: undefined, numId: undefined, level: 0, index: paragraphCount++ })
          if (selfClosing) paragraphs.pop()
          break
        case "w:pStyle": {
          const p = paragraphs.at(-1)
          if (p !== undefined) p.style = a["w:val"]
          break
        }
        case "w:numId": {
          const p = paragraphs.at(-1)
          if (p !== undefined && a["w:val"] !== "0") p.numId = a["w:val"]
          break
        }
        case "w:ilvl": {
          const p = paragraphs.at(-1)
          if (p !== undefined) p.level = Number(a["w:val"] ?? 0) || 0
          break
        }
        case "w:r":
          if (!selfClosing) runDepth++
          break
        case "w:t":
          inText = !selfClosing
          break
        case "w:tab":
        case "w:br":
        case "w:cr": {
          const p = paragraphs.at(-1)
          if (p !== undefined && runDepth > 0) p.text += name === "w:tab" ? "\t" : "\n"
          break
        }
        case "w:noBreakHyphen": {
          const p = paragraphs.at(-1)
          if (p !== undefined && runDepth > 0) p.text += "-"
          break
        }
        case "w:tbl":
          tables.push({ rows: [], row: undefined, cell: undefined })
          break
        case "w:tr": {
          const t = tables.at(-1)
          if (t !== undefined) t.row = []
          break
        }
        case "w:tc": {
          const t = tables.at(-1)
          if (t !== undefined) t.cell = []
          break
        }
        case "w:comment":
          comment = [a["w:author"], a["w:date"]?.slice(0, 10)].filter((v) => v !== undefined && v !== "").join(", ")
          break
      }
    },
    close: (name) => {
      switch (name) {
        case "w:t":
          inText = false
          break
        case "w:r":
          runDepth = Math.max(0, runDepth - 1)
          break
        case "w:p": {
          const p = paragraphs.pop()
          if (p === undefined) break
          let text = p.text.replace(/\s+$/, "")
          if (text.trim() === "") break
          if (options.anchors) text = `${anchor(part, p.index)} ${text}`
          const table = tables.at(-1)
          const inCell = table?.cell !== undefined
          const heading = inCell ? undefined : styles.headingLevel(p.style)
          if (heading !== undefined) {
            out.headings.push({ level: heading, text: p.text.trim() })
            emit(`${"#".repeat(heading)} ${text.replace(/\n/g, " ")}`)
          } else if (p.numId !== undefined) {
            out.listItems++
            const key = `${p.numId}/${p.level}`
            const n = (numbers.get(key) ?? 0) + 1
            numbers.set(key, n)
            emit(`${"  ".repeat(p.level)}${isBullet(p.numId, p.level) ? "-" : `${n}.`} ${text}`)
          } else if (comment !== undefined && !inCell) {
            emit(`- Comment${comment === "" ? "" : ` (${comment})`}: ${text}`)
          } else emit(text)
          break
        }
        case "w:tc": {
          const t = tables.at(-1)
          if (t?.cell !== undefined && t.row !== undefined) t.row.push(t.cell.join("\n"))
          if (t !== undefined) t.cell = undefined
          break
        }
        case "w:tr": {
          const t = tables.at(-1)
          if (t?.row !== undefined) t.rows.push(t.row)
          if (t !== undefined) t.row = undefined
          break
        }
        case "w:tbl": {
          const t = tables.pop()
          if (t === undefined || t.rows.length === 0) break
          out.tables++
          // A table inside a table cell becomes text of that cell.
          emit(markdownTable(t.rows))
          break
        }
        case "w:comment":
          comment = undefined
          break
      }
    },
    text: (text) => {
      const p = paragraphs.at(-1)
      if (inText && p !== undefined) p.text += text
    }
  })
  return out
}

/** The side parts of the body, by kind, in the order the package's relationships list them. */
const sideParts = (zip: ZipPackage): Array<{ readonly title: string; readonly key: string; readonly parts: Array<string> }> => {
  const rels = readRelationships(zip.text(relsOf(MAIN)), "relationships")
  return SIDE_PARTS.map((kind) => ({
    title: kind.title,
    key: kind.key,
    parts: [...new Set([...rels.values()].filter((r) => r.type.endsWith(kind.type)).map((r) => resolvePart(MAIN, r.target)))].filter((p) => zip.entries.has(p))
  }))
}

/** Every WordprocessingML part the reader renders, in order (the round-trip writer edits these). */
export const docxTextParts = (zip: ZipPackage): Array<string> => [MAIN, ...sideParts(zip).flatMap((k) => k.parts)]

export const readDocx = (bytes: Uint8Array, limits: FileLimits, options: ReaderOptions): ReaderOutput => {
  const zip = openZip(bytes, limits)
  const body = zip.text(MAIN)
  if (body === undefined) throw new FileError("file_malformed", "The file is a zip package but not a Word document (it has no word/document.xml).")
  const styles = readStyles(zip)
  const isBullet = readNumbering(zip)
  const main = readPart(body, MAIN, styles, isBullet, options)
  const blocks = [...main.blocks]
  const headings = [...main.headings]
  let tables = main.tables
  let listItems = main.listItems
  const parts: Array<string> = []
  for (const kind of sideParts(zip)) {
    const kindBlocks: Array<string> = []
    for (const part of kind.parts) {
      const read = readPart(zip.text(part)!, part, styles, isBullet, options)
      kindBlocks.push(...read.blocks)
      tables += read.tables
      listItems += read.listItems
    }
    if (kindBlocks.length === 0) continue
    parts.push(kind.key)
    // Repeated headers and footers (first page, even pages) often say the same thing: each text once.
    blocks.push(`## ${kind.title}`, ...[...new Set(kindBlocks)])
  }
  return { text: blocks.join("\n\n"), structure: { headings, tables, listItems, parts } }
}
