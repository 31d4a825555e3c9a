/**
 * A model's answer as a new .xlsx (exceljs, loaded when first used). The answer is JSON (`{ "sheets": [{ "name",
 * "rows": [[...]] }] }`, or one sheet's rows `[[...]]`), or markdown: each `## Sheet: <name>` heading starts a sheet
 * and its table becomes its rows (a table in the form readFile writes, with row numbers and column letters, is put
 * back at those cells). Numbers become numbers, `=...` a formula.
 */
import { FileError } from "./FileError.ts"
import { markdownBlocks } from "./markdownBlocks.ts"
import { columnNumber } from "./readXlsx.ts"

export interface SheetCells {
  readonly name: string
  /** Row number -> column number -> text (1-based). */
  readonly cells: Map<number, Map<number, string>>
}

const put = (sheet: SheetCells, row: number, column: number, text: string) => {
  let r = sheet.cells.get(row)
  if (r === undefined) sheet.cells.set(row, (r = new Map()))
  r.set(column, text)
}

/** A table's rows as cells; a table with a letters header and row numbers in its first column is placed by them. */
export const tableToCells = (sheet: SheetCells, rows: ReadonlyArray<ReadonlyArray<string>>): void => {
  const [head, ...body] = rows
  const addressed = head !== undefined && head[0] === "" && head.length > 1 && head.slice(1).every((c) => /^[A-Z]{1,3}$/.test(c)) && body.every((r) => /^\d+$/.test(r[0] ?? ""))
  if (addressed) {
    const columns = head.slice(1).map(columnNumber)
    for (const row of body) columns.forEach((column, i) => put(sheet, Number(row[0]), column, row[i + 1] ?? ""))
    return
  }
  rows.forEach((row, r) => row.forEach((text, c) => put(sheet, r + 1, c + 1, text)))
}

/** The answer as sheets of cells (JSON or markdown). */
export const answerSheets = (answer: string): Array<SheetCells> => {
  const trimmed = answer.trim()
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    let parsed: unknown
    try {
      parsed = JSON.parse(trimmed)
    } catch (error) {
      throw new FileError("file_malformed", "The answer looks like JSON but is not valid JSON; it cannot be written as a workbook.", error)
    }
    const list = Array.isArray(parsed) ? [{ name: "Sheet1", rows: parsed }] : (parsed as { sheets?: unknown }).sheets
    if (!Array.isArray(list)) throw new FileError("file_malformed", 'The JSON answer has no "sheets" array.')
    return list.map((s: { name?: unknown; rows?: unknown }, i) => {
      const sheet: SheetCells = { name: typeof s.name === "string" && s.name !== "" ? s.name : `Sheet${i + 1}`, cells: new Map() }
      const rows = Array.isArray(s.rows) ? s.rows : []
      rows.forEach((row: unknown, r: number) => (Array.isArray(row) ? row : [row]).forEach((v, c) => put(sheet, r + 1, c + 1, v === null || v === undefined ? "" : String(v))))
      return sheet
    })
  }
  const sheets: Array<SheetCells> = []
  let current: SheetCells | undefined
  for (const block of markdownBlocks(answer)) {
    if (block.kind === "heading") {
      const m = /^Sheet:\s*(.+)$/i.exec(block.text)
      if (m !== null) {
        current = { name: m[1]!.trim(), cells: new Map() }
        sheets.push(current)
      }
    } else if (block.kind === "table") {
      if (current === undefined) sheets.push((current = { name: `Sheet${sheets.length + 1}`, cells: new Map() }))
      tableToCells(current, block.rows)
    }
  }
  if (sheets.length === 0) throw new FileError("file_malformed", "The answer holds no table and no JSON sheets; there is nothing to write as a workbook.")
  return sheets
}

/** Excel's sheet-name rules: at most 31 characters, none of : \ / ? * [ ]. */
const sheetName = (name: string, taken: Set<string>): string => {
  let base = name.replace(/[:\\/?*[\]]/g, " ").trim().slice(0, 31) || "Sheet"
  for (let n = 2; taken.has(base.toLowerCase()); n++) base = `${base.slice(0, 28)} ${n}`
  taken.add(base.toLowerCase())
  return base
}

export const writeXlsx = async (answer: string): Promise<Uint8Array> => {
  const sheets = answerSheets(answer)
  const { default: ExcelJS } = await import("exceljs")
  const workbook = new ExcelJS.Workbook()
  const taken = new Set<string>()
  for (const sheet of sheets) {
    const worksheet = workbook.addWorksheet(sheetName(sheet.name, taken))
    for (const [r, row] of sheet.cells) {
      for (const [c, text] of row) {
        if (text === "") continue
        const cell = worksheet.getCell(r, c)
        if (/^-?\d+(\.\d+)?$/.test(text) && text.length < 16) cell.value = Number(text)
        else if (text.startsWith("=") && text.length > 1) cell.value = { formula: text.slice(1) } as never
        else cell.value = text
      }
    }
  }
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}
