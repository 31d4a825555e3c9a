/**
 * The round trip: the ORIGINAL .docx or .xlsx written back with only the edited paragraphs' text runs or cells
 * changed. Every other entry of the package, and every byte of an edited part outside the edited text, is kept:
 * styles, numbering, tables, images, formulas, comments' authors. An edited paragraph's text goes into its first
 * text run (keeping that run's formatting); its other runs are emptied. An edited cell becomes an inline string (or
 * a number, when it was a number and still is); a formula cell keeps its formula; a new cell is inserted.
 */
import { strToU8, zipSync, type Zippable } from "fflate"
import { escapeXmlText } from "./anchors.ts"
import { FileError } from "./FileError.ts"
import type { FileLimits } from "./limits.ts"
import { docxTextParts, partKey } from "./readDocx.ts"
import { columnLetters, type DateStyles, readDateStyles, splitCellRef, workbookCellTexts, workbookSheets } from "./readXlsx.ts"
import { answerSheets } from "./writeXlsx.ts"
import { splice, xmlTags } from "./xmlTags.ts"
import { openZip, type ZipPackage } from "./zip.ts"

/**
 * Edits from an answer that gives sheets back as tables in readFile's form (`## Sheet: name`, row numbers and column
 * letters): every cell whose text differs from the original's. Cells the answer leaves out are not changed.
 */
const tableEdits = (zip: ZipPackage, answer: string): Map<string, string> => {
  const original = workbookCellTexts(zip)
  const edits = new Map<string, string>()
  for (const sheet of answerSheets(answer)) {
    const cells = original.get(sheet.name)
    if (cells === undefined) throw new FileError("file_anchor_unknown", `The answer has a sheet ${JSON.stringify(sheet.name)} the original does not have; nothing was written.`)
    for (const [row, columns] of sheet.cells) {
      for (const [column, text] of columns) {
        if ((cells.get(row)?.get(column) ?? "") !== text) edits.set(`${sheet.name}!${columnLetters(column)}${row}`, text)
      }
    }
  }
  return edits
}

const unknownAnchor = (anchor: string, what: string) =>
  new FileError("file_anchor_unknown", `The edit ⟦${anchor}⟧ names no ${what} of the original file; nothing was written.`)

/** All entries of the package, in their order, with `replaced` ones swapped in; compressed again. */
const repack = (zip: ZipPackage, replaced: ReadonlyMap<string, string>): Uint8Array => {
  const files: Zippable = {}
  for (const name of zip.entries.keys()) {
    if (name.endsWith("/")) continue
    const text = replaced.get(name)
    files[name] = text === undefined ? zip.bytes(name)! : strToU8(text)
  }
  return zipSync(files, { level: 6 })
}

const preserve = (text: string) => `<w:t xml:space="preserve">${escapeXmlText(text)}</w:t>`

/** Paragraph index -> new text, applied to one WordprocessingML part (paragraphs counted as the reader counts them). */
const editParagraphs = (xml: string, edits: ReadonlyMap<number, string>, part: string): string => {
  const changes: Array<{ start: number; end: number; value: string }> = []
  const open: Array<{ index: number; texts: Array<{ start: number; end: number }>; textOpen: number | undefined }> = []
  const seen = new Set<number>()
  let count = 0
  for (const tag of xmlTags(xml)) {
    if (tag.name === "w:p") {
      if (tag.closing) {
        const p = open.pop()
        if (p === undefined) continue
        const text = edits.get(p.index)
        if (text === undefined) continue
        seen.add(p.index)
        if (p.texts.length === 0) changes.push({ start: tag.start, end: tag.start, value: `<w:r>${preserve(text)}</w:r>` })
        p.texts.forEach((t, i) => changes.push({ start: t.start, end: t.end, value: i === 0 ? preserve(text) : "<w:t/>" }))
      } else if (tag.selfClosing) {
        const index = count++
        const text = edits.get(index)
        if (text !== undefined) {
          seen.add(index)
          changes.push({ start: tag.start, end: tag.end, value: `${xml.slice(tag.start, tag.end - 2).trimEnd()}><w:r>${preserve(text)}</w:r></w:p>` })
        }
      } else open.push({ index: count++, texts: [], textOpen: undefined })
    } else if (tag.name === "w:t" && open.length > 0) {
      const p = open.at(-1)!
      if (tag.selfClosing) p.texts.push({ start: tag.start, end: tag.end })
      else if (!tag.closing) p.textOpen = tag.start
      else if (p.textOpen !== undefined) {
        p.texts.push({ start: p.textOpen, end: tag.end })
        p.textOpen = undefined
      }
    }
  }
  for (const index of edits.keys()) if (!seen.has(index)) throw unknownAnchor(`${partKey(part)}/${index}`, "paragraph")
  return splice(xml, changes)
}

export const roundTripDocx = (original: Uint8Array, edits: ReadonlyMap<string, string>, limits: FileLimits): Uint8Array => {
  const zip = openZip(original, limits)
  if (!zip.entries.has("word/document.xml")) throw new FileError("file_malformed", "The original is not a Word document (it has no word/document.xml).")
  const parts = new Map(docxTextParts(zip).map((p) => [partKey(p), p]))
  const byPart = new Map<string, Map<number, string>>()
  for (const [anchor, text] of edits) {
    const m = /^([\w.-]+)\/(\d+)$/.exec(anchor)
    const part = m === null ? undefined : parts.get(m[1]!)
    if (m === null || part === undefined) throw unknownAnchor(anchor, "paragraph")
    let map = byPart.get(part)
    if (map === undefined) byPart.set(part, (map = new Map()))
    map.set(Number(m[2]), text)
  }
  const replaced = new Map<string, string>()
  for (const [part, map] of byPart) replaced.set(part, editParagraphs(zip.text(part)!, map, part))
  return repack(zip, replaced)
}

const attribute = (tagText: string, name: string): string | undefined => new RegExp(`\\s${name}="([^"]*)"`).exec(tagText)?.[1]

const numeric = /^-?\d+(\.\d+)?(E[+-]?\d+)?$/i

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}))?$/

/** ISO text (as readFile shows a date cell) -> the date serial of the workbook's date system. */
const isoToSerial = (text: string, date1904: boolean): number | undefined => {
  const m = ISO_DATE.exec(text)
  if (m === null) return undefined
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0))
  return Number.isNaN(ms) ? undefined : (ms - (date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30))) / 86_400_000
}

/**
 * A cell element holding `text`: a date serial when its format shows dates and the text is an ISO date, a number
 * when it was one (or is new) and still reads as one, else an inline string.
 */
const cellXml = (ref: string, style: string | undefined, asNumber: boolean, text: string, dates?: DateStyles): string => {
  const head = `<c r="${ref}"${style === undefined ? "" : ` s="${style}"`}`
  if (text === "") return `${head}/>`
  const serial = asNumber && dates !== undefined && style !== undefined && dates.dateStyles.has(Number(style)) ? isoToSerial(text, dates.date1904) : undefined
  if (serial !== undefined) return `${head}><v>${serial}</v></c>`
  if (asNumber && numeric.test(text)) return `${head}><v>${text}</v></c>`
  return `${head} t="inlineStr"><is><t xml:space="preserve">${escapeXmlText(text)}</t></is></c>`
}

/**
 * Cell reference -> new text, applied to one worksheet part: existing cells are rewritten in place (a formula cell
 * keeps its formula), new cells are inserted in column order into their row, and new rows in row order.
 */
const editCells = (xml: string, edits: ReadonlyMap<string, string>, dates: DateStyles): string => {
  const changes: Array<{ start: number; end: number; value: string }> = []
  const seen = new Set<string>()
  /** Rows of the sheet: number, where a new cell may go, and the columns and ends of its cells. */
  const rows: Array<{ row: number; start: number; end: number; contentEnd: number; cells: Array<{ column: number; start: number }> }> = []
  let sheetDataEnd: number | undefined
  let sheetDataSelfClosing: { start: number; end: number } | undefined
  let cell: { start: number; ref: string; openTag: string } | undefined
  let hasFormula = false
  const write = (ref: string, openTag: string, start: number, end: number) => {
    const text = edits.get(ref)
    if (text === undefined) return
    seen.add(ref)
    if (hasFormula) return
    changes.push({ start, end, value: cellXml(ref, attribute(openTag, "s"), (attribute(openTag, "t") ?? "n") === "n", text, dates) })
  }
  for (const tag of xmlTags(xml)) {
    if (tag.name === "sheetData") {
      if (tag.selfClosing) sheetDataSelfClosing = { start: tag.start, end: tag.end }
      else if (tag.closing) sheetDataEnd = tag.start
    } else if (tag.name === "row") {
      const tagText = xml.slice(tag.start, tag.end)
      if (tag.closing) {
        const last = rows.at(-1)
        if (last !== undefined) last.contentEnd = tag.start
      } else {
        const row = Number(attribute(tagText, "r") ?? (rows.at(-1)?.row ?? 0) + 1)
        rows.push({ row, start: tag.start, end: tag.end, contentEnd: tag.selfClosing ? -1 : tag.end, cells: [] })
      }
    } else if (tag.name === "c") {
      const tagText = xml.slice(tag.start, tag.end)
      const ref = attribute(tagText, "r")?.toUpperCase()
      const at = ref === undefined ? undefined : splitCellRef(ref)
      if (!tag.closing && at !== undefined) rows.at(-1)?.cells.push({ column: at.column, start: tag.start })
      if (tag.selfClosing) {
        hasFormula = false
        if (ref !== undefined) write(ref, tagText, tag.start, tag.end)
      } else if (!tag.closing) {
        hasFormula = false
        cell = ref === undefined ? undefined : { start: tag.start, ref, openTag: tagText }
      } else if (cell !== undefined) {
        write(cell.ref, cell.openTag, cell.start, tag.end)
        cell = undefined
      }
    } else if (tag.name === "f" && cell !== undefined && !tag.closing) hasFormula = true
  }
  // New cells, grouped by row, in column order.
  const added = new Map<number, Array<{ column: number; xml: string }>>()
  for (const [ref, text] of edits) {
    if (seen.has(ref) || text === "") continue
    const at = splitCellRef(ref)!
    const list = added.get(at.row) ?? []
    list.push({ column: at.column, xml: cellXml(ref, undefined, true, text) })
    added.set(at.row, list)
  }
  const newRows: Array<{ row: number; xml: string }> = []
  for (const [rowNumber, cells] of added) {
    cells.sort((a, b) => a.column - b.column)
    const row = rows.find((r) => r.row === rowNumber)
    if (row === undefined) {
      newRows.push({ row: rowNumber, xml: `<row r="${rowNumber}">${cells.map((c) => c.xml).join("")}</row>` })
      continue
    }
    if (row.contentEnd < 0) {
      // An empty row written as <row .../>: it keeps its attributes and gets the cells.
      changes.push({ start: row.start, end: row.end, value: `${xml.slice(row.start, row.end - 2).trimEnd()}>${cells.map((c) => c.xml).join("")}</row>` })
      continue
    }
    for (const c of cells) {
      const before = row.cells.find((existing) => existing.column > c.column)
      const at = before?.start ?? row.contentEnd
      changes.push({ start: at, end: at, value: c.xml })
    }
  }
  for (const r of newRows.sort((a, b) => a.row - b.row)) {
    const before = rows.find((existing) => existing.row > r.row && existing.contentEnd >= 0)
    if (before !== undefined) changes.push({ start: before.start, end: before.start, value: r.xml })
    else if (sheetDataEnd !== undefined) changes.push({ start: sheetDataEnd, end: sheetDataEnd, value: r.xml })
    else if (sheetDataSelfClosing !== undefined) changes.push({ start: sheetDataSelfClosing.start, end: sheetDataSelfClosing.end, value: `<sheetData>${r.xml}</sheetData>` })
  }
  return splice(xml, changes)
}

/**
 * Edits by `Sheet!A1` applied to the original workbook. Formulas are recalculated when the file is next opened
 * (their cached values may depend on edited cells).
 */
export const roundTripXlsx = (original: Uint8Array, anchored: ReadonlyMap<string, string>, answer: string, limits: FileLimits): Uint8Array => {
  const zip = openZip(original, limits)
  const sheets = workbookSheets(zip)
  const edits = anchored.size > 0 ? anchored : tableEdits(zip, answer)
  const bySheet = new Map<string, Map<string, string>>()
  for (const [anchor, text] of edits) {
    const bang = anchor.lastIndexOf("!")
    const name = anchor.slice(0, bang).replace(/^'(.*)'$/, "$1")
    const ref = anchor.slice(bang + 1).toUpperCase()
    const sheet = sheets.find((s) => s.name === name)
    if (bang < 0 || sheet === undefined || splitCellRef(ref) === undefined) throw unknownAnchor(anchor, "cell")
    let map = bySheet.get(sheet.part)
    if (map === undefined) bySheet.set(sheet.part, (map = new Map()))
    map.set(ref, text)
  }
  const replaced = new Map<string, string>()
  const dates = readDateStyles(zip)
  for (const [part, map] of bySheet) replaced.set(part, editCells(zip.text(part)!, map, dates))
  if (replaced.size > 0) {
    const workbook = zip.text("xl/workbook.xml")!
    if (/<calcPr\b/.test(workbook) && !/fullCalcOnLoad=/.test(workbook)) replaced.set("xl/workbook.xml", workbook.replace(/<calcPr\b/, '<calcPr fullCalcOnLoad="1"'))
  }
  return repack(zip, replaced)
}
