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

const readSheet = (xml: string, name: string, shared: ReadonlyArray<string>): SheetRead => {
  const out: SheetRead = { cells: new Map(), headerFooter: [], usedColumns: new Set() }
  let cell: { row: number; column: number; type: string; value: string; inline: string } | undefined
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
        cell = { row: ref?.row ?? rowNumber, column: columnInRow, type: a.t ?? "n", value: "", inline: "" }
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
  const out = new Map<string, Map<number, Map<number, string>>>()
  for (const sheet of workbookSheets(zip)) {
    const xml = zip.text(sheet.part)
    if (xml !== undefined) out.set(sheet.name, readSheet(xml, sheet.name, shared).cells)
  }
  return out
}

export const readXlsx = (bytes: Uint8Array, limits: FileLimits): ReaderOutput => {
  const zip = openZip(bytes, limits)
  const sheets = workbookSheets(zip)
  const shared = readSharedStrings(zip)
  const blocks: Array<string> = []
  const structureSheets: Array<FileSheet> = []
  const parts = new Set<string>()
  for (const sheet of sheets) {
    const xml = zip.text(sheet.part)
    if (xml === undefined) continue
    const read = readSheet(xml, sheet.name, shared)
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
