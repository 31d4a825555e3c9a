/**
 * .xlsx: every sheet in workbook order as a markdown table whose rows and columns carry the sheet's own numbers and
 * letters (so the model can name a cell, and `reconstruct` can write an edit back to it), shared and inline strings,
 * cached values of formulas, then the sheet's comments (with authors) and its header and footer text.
 */
import { FileError } from "./FileError.ts"
import type { FileLimits } from "./limits.ts"
import { markdownTable } from "./markdown.ts"
import type { FileSheet, ReaderOutput } from "./types.ts"
import { readRelationships, walkXml } from "./xml.ts"
import { openZip, relsOf, resolvePart, type ZipPackage } from "./zip.ts"

const WORKBOOK = "xl/workbook.xml"

/** A column's letters -> its 1-based number (A -> 1, AA -> 27). */
export const columnNumber = (letters: string): number => {
  let n = 0
  for (const c of letters.toUpperCase()) n = n * 26 + (c.charCodeAt(0) - 64)
  return n
}

export const columnLetters = (n: number): string => {
  let s = ""
  for (let v = n; v > 0; v = Math.floor((v - 1) / 26)) s = String.fromCharCode(65 + ((v - 1) % 26)) + s
  return s
}

export const splitCellRef = (ref: string): { readonly column: number; readonly row: number } | undefined => {
  const m = /^([A-Za-z]{1,3})(\d{1,7})$/.exec(ref)
  return m === null ? undefined : { column: columnNumber(m[1]!), row: Number(m[2]) }
}

/** Strings of `<si>` (rich text runs joined; phonetic runs left out), in order. */
const readSharedStrings = (zip: ZipPackage): Array<string> => {
  const xml = zip.text("xl/sharedStrings.xml")
  const strings: Array<string> = []
  if (xml === undefined) return strings
  let current: string | undefined
  let inText = false
  let phonetic = 0
  walkXml(xml, "shared strings", {
    open: (name, _a, selfClosing) => {
      if (name === "si") current = ""
      else if (name === "t") inText = !selfClosing
      else if (name === "rPh" && !selfClosing) phonetic++
    },
    close: (name) => {
      if (name === "si") {
        strings.push(current ?? "")
        current = undefined
      } else if (name === "t") inText = false
      else if (name === "rPh") phonetic--
    },
    text: (t) => {
      if (inText && phonetic === 0 && current !== undefined) current += t
    }
  })
  return strings
}

export interface WorkbookSheet {
  readonly name: string
  readonly part: string
}

export const workbookSheets = (zip: ZipPackage): Array<WorkbookSheet> => {
  const xml = zip.text(WORKBOOK)
  if (xml === undefined) throw new FileError("file_malformed", "The file is a zip package but not a workbook (it has no xl/workbook.xml).")
  const rels = readRelationships(zip.text(relsOf(WORKBOOK)), "workbook relationships")
  const sheets: Array<WorkbookSheet> = []
  walkXml(xml, "workbook", {
    open: (name, a) => {
      if (name !== "sheet") return
      const rel = rels.get(a["r:id"] ?? "")
      if (rel !== undefined) sheets.push({ name: a.name ?? `Sheet${sheets.length + 1}`, part: resolvePart(WORKBOOK, rel.target) })
    }
  })
  return sheets
}

interface SheetRead {
  readonly cells: Map<number, Map<number, string>>
  readonly headerFooter: Array<string>
  /** Columns holding a value somewhere: a sparse sheet gets no empty columns. */
  readonly usedColumns: Set<number>
}

/** Built-in number formats that show a date or time (ECMA-376 18.8.30, with the common locale ids). */
const BUILTIN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58])

/** A custom format code that shows a date or time: d, m, y, h or s outside quoted text, brackets and escapes. */
const isDateFormatCode = (code: string): boolean => /[dmyhs]/i.test(code.replace(/"[^"]*"|\[[^\]]*\]|\\.|_.|\*./g, ""))

export interface DateStyles {
  /** Indexes of cell formats (a cell's `s`) that show dates. */
  readonly dateStyles: ReadonlySet<number>
  /** The workbook counts days from 1904 (old Mac workbooks) rather than 1900. */
  readonly date1904: boolean
}

/**
 * Which cell formats show dates: a date is stored as a serial number, and a birth date read as "29221" would be
 * neither readable by the model nor recognisable as a date by the tokeniser.
 */
export const readDateStyles = (zip: ZipPackage): DateStyles => {
  const xml = zip.text("xl/styles.xml")
  const dateStyles = new Set<number>()
  if (xml !== undefined) {
    const customDate = new Set<number>()
    let inCellXfs = false
    let index = 0
    walkXml(xml, "styles", {
      open: (name, a, selfClosing) => {
        if (name === "numFmt" && a.numFmtId !== undefined && isDateFormatCode(a.formatCode ?? "")) customDate.add(Number(a.numFmtId))
        else if (name === "cellXfs") inCellXfs = !selfClosing
        else if (name === "xf" && inCellXfs) {
          const id = Number(a.numFmtId ?? 0)
          if (BUILTIN_DATE_FORMATS.has(id) || customDate.has(id)) dateStyles.add(index)
          index++
        }
      },
      close: (name) => {
        if (name === "cellXfs") inCellXfs = false
      }
    })
  }
  return { dateStyles, date1904: /<workbookPr\b[^>]*\bdate1904="(1|true)"/.test(zip.text(WORKBOOK) ?? "") }
}

/** A date serial as ISO 8601 text: the date, with the time of day when it has one. */
export const serialToIso = (serial: number, date1904: boolean): string => {
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30)
  const ms = Math.round(serial * 86_400_000)
  const iso = new Date(epoch + ms).toISOString()
  return ms % 86_400_000 === 0 ? iso.slice(0, 10) : iso.slice(0, 16).replace("T", " ")
}

const readSheet = (xml: string, name: string, shared: ReadonlyArray<string>, dates: DateStyles = { dateStyles: new Set(), date1904: false }): SheetRead => {
  const out: SheetRead = { cells: new Map(), headerFooter: [], usedColumns: new Set() }
  let cell: { row: number; column: number; type: string; value: string; inline: string; style: number } | undefined
  let collecting: "v" | "t" | "hf" | undefined
  let hf = ""
  let rowNumber = 0
  let columnInRow = 0
  walkXml(xml, `sheet ${name}`, {
    open: (tag, a, selfClosing) => {
      if (tag === "row") {
        rowNumber = Number(a.r ?? rowNumber + 1)
        columnInRow = 0
      } else if (tag === "c") {
        columnInRow++
        const ref = a.r === undefined ? undefined : splitCellRef(a.r)
        if (ref !== undefined) columnInRow = ref.column
        cell = { row: ref?.row ?? rowNumber, column: columnInRow, type: a.t ?? "n", value: "", inline: "", style: Number(a.s ?? 0) }
        if (selfClosing) cell = undefined
      } else if (cell !== undefined && tag === "v" && !selfClosing) collecting = "v"
      else if (cell !== undefined && tag === "t" && !selfClosing) collecting = "t"
      else if (/^(odd|even|first)(Header|Footer)$/.test(tag) && !selfClosing) {
        collecting = "hf"
        hf = ""
      }
    },
    close: (tag) => {
      if (tag === "v" || tag === "t") collecting = undefined
      else if (/^(odd|even|first)(Header|Footer)$/.test(tag)) {
        collecting = undefined
        // Header/footer codes (&L, &C, &R, &P, &"font", &12) are layout, not text.
        const text = hf.replace(/&"[^"]*"/g, " ").replace(/&[LCRPNDTZFA]/g, " ").replace(/&\d+/g, " ").replace(/&&/g, "&").replace(/\s+/g, " ").trim()
        if (text !== "") out.headerFooter.push(text)
      } else if (tag === "c" && cell !== undefined) {
        let text: string
        switch (cell.type) {
          case "s":
            text = shared[Number(cell.value)] ?? ""
            break
          case "inlineStr":
            text = cell.inline
            break
          case "b":
            text = cell.value === "1" ? "TRUE" : cell.value === "0" ? "FALSE" : cell.value
            break
          case "n": {
            const serial = Number(cell.value)
            text = cell.value !== "" && Number.isFinite(serial) && dates.dateStyles.has(cell.style) ? serialToIso(serial, dates.date1904) : cell.value
            break
          }
          default:
            text = cell.value
        }
        if (text !== "") {
          let row = out.cells.get(cell.row)
          if (row === undefined) out.cells.set(cell.row, (row = new Map()))
          row.set(cell.column, text)
          out.usedColumns.add(cell.column)
        }
        cell = undefined
      }
    },
    text: (t) => {
      if (collecting === "v" && cell !== undefined) cell.value += t
      else if (collecting === "t" && cell !== undefined) cell.inline += t
      else if (collecting === "hf") hf += t
    }
  })
  return out
}

/** Comments of one sheet (its relationships name the comments part): `B2 (author): text`. */
const readComments = (zip: ZipPackage, sheetPart: string): Array<string> => {
  const rels = readRelationships(zip.text(relsOf(sheetPart)), "sheet relationships")
  const out: Array<string> = []
  for (const rel of rels.values()) {
    if (!rel.type.endsWith("/comments")) continue
    const part = resolvePart(sheetPart, rel.target)
    const xml = zip.text(part)
    if (xml === undefined) continue
    const authors: Array<string> = []
    let inAuthor = false
    let author = ""
    let comment: { ref: string; author: string; text: string } | undefined
    let inText = false
    walkXml(xml, "comments", {
      open: (name, a, selfClosing) => {
        if (name === "author" && !selfClosing) {
          inAuthor = true
          author = ""
        } else if (name === "comment") comment = { ref: a.ref ?? "", author: authors[Number(a.authorId ?? -1)] ?? "", text: "" }
        else if (name === "t" && !selfClosing) inText = true
      },
      close: (name) => {
        if (name === "author") {
          authors.push(author)
          inAuthor = false
        } else if (name === "t") inText = false
        else if (name === "comment" && comment !== undefined) {
          out.push(`- ${comment.ref}${comment.author === "" ? "" : ` (${comment.author})`}: ${comment.text.replace(/\s+/g, " ").trim()}`)
          comment = undefined
        }
      },
      text: (t) => {
        if (inAuthor) author += t
        else if (inText && comment !== undefined) comment.text += t
      }
    })
  }
  return out
}

/** The text of every cell with a value, by sheet name, row and column (what readXlsx renders). */
export const workbookCellTexts = (zip: ZipPackage): Map<string, Map<number, Map<number, string>>> => {
  const shared = readSharedStrings(zip)
  const dates = readDateStyles(zip)
  const out = new Map<string, Map<number, Map<number, string>>>()
  for (const sheet of workbookSheets(zip)) {
    const xml = zip.text(sheet.part)
    if (xml !== undefined) out.set(sheet.name, readSheet(xml, sheet.name, shared, dates).cells)
  }
  return out
}

export const readXlsx = (bytes: Uint8Array, limits: FileLimits): ReaderOutput => {
  const zip = openZip(bytes, limits)
  const sheets = workbookSheets(zip)
  const shared = readSharedStrings(zip)
  const dates = readDateStyles(zip)
  const blocks: Array<string> = []
  const structureSheets: Array<FileSheet> = []
  const parts = new Set<string>()
  for (const sheet of sheets) {
    const xml = zip.text(sheet.part)
    if (xml === undefined) continue
    const read = readSheet(xml, sheet.name, shared, dates)
    const rowNumbers = [...read.cells.keys()].sort((a, b) => a - b)
    const columns = [...read.usedColumns].sort((a, b) => a - b)
    blocks.push(`## Sheet: ${sheet.name}`)
    if (rowNumbers.length === 0) blocks.push("(empty)")
    else {
      const rows = rowNumbers.map((r) => {
        const row = read.cells.get(r)!
        return [String(r), ...columns.map((c) => row.get(c) ?? "")]
      })
      blocks.push(markdownTable([["", ...columns.map(columnLetters)], ...rows]))
    }
    const comments = readComments(zip, sheet.part)
    if (comments.length > 0) {
      parts.add("comments")
      blocks.push(`### Comments on ${sheet.name}`, comments.join("\n"))
    }
    if (read.headerFooter.length > 0) {
      parts.add("headers")
      blocks.push(`### Header and footer of ${sheet.name}`, [...new Set(read.headerFooter)].join("\n"))
    }
    structureSheets.push({ name: sheet.name, rows: rowNumbers.length, columns: columns.length })
  }
  return {
    text: blocks.join("\n\n"),
    structure: { headings: [], tables: structureSheets.filter((s) => s.rows > 0).length, listItems: 0, parts: [...parts], sheets: structureSheets }
  }
}
