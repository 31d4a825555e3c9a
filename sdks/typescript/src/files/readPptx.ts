/**
 * .pptx: slides in presentation order (the order of `p:sldIdLst`, not of the file names), each with its title as a
 * heading, its text paragraphs (indented by level), its tables as markdown tables, then its speaker notes.
 */
import { FileError } from "./FileError.ts"
import type { FileLimits } from "./limits.ts"
import { markdownTable } from "./markdown.ts"
import type { FileHeading, ReaderOptions, ReaderOutput } from "./types.ts"
import { readRelationships, walkXml } from "./xml.ts"
import { openZip, relsOf, resolvePart, type ZipPackage } from "./zip.ts"
import { anchor } from "./readDocx.ts"

const PRESENTATION = "ppt/presentation.xml"

export const presentationSlides = (zip: ZipPackage): Array<string> => {
  const xml = zip.text(PRESENTATION)
  if (xml === undefined) throw new FileError("file_malformed", "The file is a zip package but not a presentation (it has no ppt/presentation.xml).")
  const rels = readRelationships(zip.text(relsOf(PRESENTATION)), "presentation relationships")
  const slides: Array<string> = []
  walkXml(xml, "presentation", {
    open: (name, a) => {
      if (name !== "p:sldId") return
      const rel = rels.get(a["r:id"] ?? "")
      if (rel !== undefined) slides.push(resolvePart(PRESENTATION, rel.target))
    }
  })
  return slides
}

interface SlideText {
  readonly title: Array<string>
  readonly blocks: Array<string>
  tables: number
}

/** Paragraphs of a slide (or notes) part; paragraphs are counted like the round-trip writer counts `a:p`. */
const readSlidePart = (xml: string, part: string, options: ReaderOptions, skipPlaceholders: ReadonlySet<string>): SlideText => {
  const out: SlideText = { title: [], blocks: [], tables: 0 }
  let paragraph: { text: string; level: number; index: number } | undefined
  let paragraphCount = 0
  let placeholder: string | undefined
  let inText = false
  let table: { rows: Array<Array<string>>; row: Array<string> | undefined; cell: Array<string> | undefined } | undefined
  walkXml(xml, part, {
    open: (name, a, selfClosing) => {
      if (name === "p:sp") placeholder = undefined
      else if (name === "p:ph") placeholder = a.type ?? "body"
      else if (name === "a:p") {
        paragraph = { text: "", level: 0, index: paragraphCount++ }
        if (selfClosing) paragraph = undefined
      } else if (name === "a:pPr" && paragraph !== undefined) paragraph.level = Number(a.lvl ?? 0) || 0
      else if (name === "a:t") inText = !selfClosing
      else if (name === "a:br" && paragraph !== undefined) paragraph.text += "\n"
      else if (name === "a:tbl") table = { rows: [], row: undefined, cell: undefined }
      else if (name === "a:tr" && table !== undefined) table.row = []
      else if (name === "a:tc" && table !== undefined) table.cell = []
    },
    close: (name) => {
      if (name === "a:t") inText = false
      else if (name === "a:p" && paragraph !== undefined) {
        const p = paragraph
        paragraph = undefined
        if (p.text.trim() === "" || (placeholder !== undefined && skipPlaceholders.has(placeholder))) return
        const text = options.anchors ? `${anchor(part, p.index)} ${p.text.trim()}` : p.text.trim()
        if (table?.cell !== undefined) table.cell.push(text)
        else if (placeholder === "title" || placeholder === "ctrTitle") out.title.push(text)
        else out.blocks.push(`${"  ".repeat(p.level)}${text}`)
      } else if (name === "a:tc" && table?.cell !== undefined) {
        table.row?.push(table.cell.join("\n"))
        table.cell = undefined
      } else if (name === "a:tr" && table?.row !== undefined) {
        table.rows.push(table.row)
        table.row = undefined
      } else if (name === "a:tbl" && table !== undefined) {
        if (table.rows.length > 0) {
          out.blocks.push(markdownTable(table.rows))
          out.tables++
        }
        table = undefined
      }
    },
    text: (t) => {
      if (inText && paragraph !== undefined) paragraph.text += t
    }
  })
  return out
}

/** Placeholders of a notes page that repeat the slide (its image, number, header, date) rather than notes. */
const NOTES_NOISE = new Set(["sldImg", "sldNum", "hdr", "ftr", "dt"])

export const readPptx = (bytes: Uint8Array, limits: FileLimits, options: ReaderOptions): ReaderOutput => {
  const zip = openZip(bytes, limits)
  const slides = presentationSlides(zip)
  const blocks: Array<string> = []
  const headings: Array<FileHeading> = []
  let tables = 0
  let notes = false
  slides.forEach((part, i) => {
    const xml = zip.text(part)
    if (xml === undefined) return
    const slide = readSlidePart(xml, part, options, new Set())
    const title = slide.title.join(" ").replace(/\n/g, " ")
    headings.push({ level: 2, text: title })
    blocks.push(`## Slide ${i + 1}${title === "" ? "" : `: ${title}`}`, ...slide.blocks)
    tables += slide.tables
    for (const rel of readRelationships(zip.text(relsOf(part)), "slide relationships").values()) {
      if (!rel.type.endsWith("/notesSlide")) continue
      const notesPart = resolvePart(part, rel.target)
      const notesXml = zip.text(notesPart)
      if (notesXml === undefined) continue
      const read = readSlidePart(notesXml, notesPart, options, NOTES_NOISE)
      if (read.blocks.length === 0) continue
      notes = true
      blocks.push(`Notes:\n${read.blocks.join("\n")}`)
    }
  })
  return { text: blocks.join("\n\n"), structure: { headings, tables, listItems: 0, parts: notes ? ["notes"] : [], slides: slides.length } }
}
