// reconstruct on the device: answers rebuilt into .md, .html, .docx and .xlsx with the originals restored from the
// call's aliases, and the round trip that writes the ORIGINAL .docx/.xlsx back with only the edited paragraphs or
// cells changed. Rebuilt files are opened with independent readers (mammoth for .docx, exceljs for .xlsx).
import ExcelJS from "exceljs"
import mammoth from "mammoth"
import { beforeAll, describe, expect, it } from "vitest"
import { FileError, readFile, reconstruct } from "../../../../sdks/typescript/src/index.ts"
import { openZip } from "../../../../sdks/typescript/src/files/zip.ts"
import { DEFAULT_FILE_LIMITS } from "../../../../sdks/typescript/src/files/limits.ts"
import { builtinNameModel, createSession, tokeniseText } from "../../../../sdks/typescript/src/tokeniser/index.ts"
import { makeDocx, makeXlsx, ORIGINALS } from "./fixtures.ts"

/** What the device sends for a file and keeps to restore the answer: its tokenised text and the alias map. */
const tokenise = async (text: string) => {
  const session = createSession({ names: builtinNameModel })
  const tokenised = await tokeniseText(text, session)
  return { tokenised, aliases: session.map }
}

const aliasOf = (tokenised: string, original: string, text: string): string => {
  // The alias that stands where `original` stood in `text`.
  const before = text.slice(0, text.indexOf(original))
  const prefix = before.slice(-12)
  const at = tokenised.indexOf(prefix) + prefix.length
  const m = /^<[A-Z_]+_\d+_[0-9a-z]+>/.exec(tokenised.slice(at))
  if (m === null) throw new Error(`no alias for ${original}`)
  return m[0]
}

const docxHtml = async (bytes: Uint8Array) => (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value
const loadWorkbook = async (bytes: Uint8Array) => {
  const workbook = new ExcelJS.Workbook()
  await workbook.xlsx.load(Buffer.from(bytes) as never)
  return workbook
}
const refusal = async (promise: Promise<unknown>): Promise<FileError> => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(FileError)
  return error as FileError
}

let docx: Uint8Array
let xlsx: Uint8Array
beforeAll(async () => {
  docx = await makeDocx()
  xlsx = await makeXlsx()
})

const ANSWER = (name: string, email: string) => `# Summary for ${name}

Contact **${email}** about the *report*; <script>alert(1)</script> stays text.

- first point
  - nested point
1. step one
2. step two

| Name | Email | Amount |
| --- | --- | --- |
| ${name} | ${email} | 42 |
`

describe("reconstruct: new files from an answer, originals restored", () => {
  it(".md: the answer with every alias replaced by its original", async () => {
    const { tokenised, aliases } = await tokenise(`Write to ${ORIGINALS.email} and ${ORIGINALS.bodyName}.`)
    expect(tokenised).not.toContain(ORIGINALS.email)
    const bytes = await reconstruct(`Reply: ${tokenised}`, { format: "md", aliases })
    expect(new TextDecoder().decode(bytes)).toBe(`Reply: Write to ${ORIGINALS.email} and ${ORIGINALS.bodyName}.`)
  })

  it("aliases may be a plain object; without aliases the text is kept as is", async () => {
    expect(new TextDecoder().decode(await reconstruct("<EMAIL_1_abcd> x", { format: "md", aliases: { "<EMAIL_1_abcd>": "a@b.org" } }))).toBe("a@b.org x")
    expect(new TextDecoder().decode(await reconstruct("<EMAIL_1_abcd> x", { format: "md" }))).toBe("<EMAIL_1_abcd> x")
  })

  it(".html: headings, emphasis, nested lists, a table; the answer's markup is escaped", async () => {
    const { tokenised, aliases } = await tokenise(ANSWER(ORIGINALS.cellName, ORIGINALS.cellEmail))
    const html = new TextDecoder().decode(await reconstruct(tokenised, { format: "html", filename: "summary.html", aliases }))
    expect(html).toContain("<title>summary</title>")
    expect(html).toContain(`<h1>Summary for ${ORIGINALS.cellName}</h1>`)
    expect(html).toContain(`<strong>${ORIGINALS.cellEmail}</strong>`)
    expect(html).toContain("<em>report</em>")
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).not.toContain("<script>")
    expect(html).toMatch(/<ul>\n<li>first point<\/li>\n<ul>\n<li>nested point<\/li>\n<\/ul>\n<\/ul>\n<ol>\n<li>step one<\/li>/)
    expect(html).toContain(`<tr><td>${ORIGINALS.cellName}</td><td>${ORIGINALS.cellEmail}</td><td>42</td></tr>`)
  })

  it(".docx: a Word document mammoth reads back with headings, lists, table and the originals", async () => {
    const { tokenised, aliases } = await tokenise(ANSWER(ORIGINALS.cellName, ORIGINALS.cellEmail))
    const bytes = await reconstruct(tokenised, { format: "docx", filename: "summary.docx", aliases })
    const html = await docxHtml(bytes)
    expect(html).toContain(`<h1>Summary for ${ORIGINALS.cellName}</h1>`)
    expect(html).toContain(`<strong>${ORIGINALS.cellEmail}</strong>`)
    expect(html).toMatch(/<li>first point/)
    expect(html).toMatch(/<li>step one<\/li><li>step two<\/li>/)
    expect(html).toContain(`<td><p>${ORIGINALS.cellName}</p></td><td><p>${ORIGINALS.cellEmail}</p></td><td><p>42</p></td>`)
    expect(html).not.toMatch(/<[A-Z]+_\d+_/)
  })

  it(".xlsx from markdown sheets and from JSON: exceljs reads names, numbers and formulas", async () => {
    const { tokenised, aliases } = await tokenise(`## Sheet: People\n\n| Name | Email | Amount |\n| --- | --- | --- |\n| ${ORIGINALS.cellName} | ${ORIGINALS.cellEmail} | 42 |\n| Total | | =SUM(C2:C2) |\n\n## Sheet: Other\n\n| a |\n| --- |\n| b |`)
    const workbook = await loadWorkbook(await reconstruct(tokenised, { format: "xlsx", aliases }))
    expect(workbook.worksheets.map((w) => w.name)).toEqual(["People", "Other"])
    const people = workbook.getWorksheet("People")!
    expect(people.getCell("A2").value).toBe(ORIGINALS.cellName)
    expect(people.getCell("B2").value).toBe(ORIGINALS.cellEmail)
    expect(people.getCell("C2").value).toBe(42)
    expect(people.getCell("C3").formula).toBe("SUM(C2:C2)")
    const json = await loadWorkbook(await reconstruct(JSON.stringify({ sheets: [{ name: "Data", rows: [["x", 1], ["y", 2]] }] }), { format: "xlsx" }))
    expect(json.getWorksheet("Data")!.getCell("B2").value).toBe(2)
    // The form readFile writes (row numbers, column letters) goes back to the same cells.
    const addressed = await loadWorkbook(await reconstruct("## Sheet: S\n\n|  | B | D |\n| --- | --- | --- |\n| 3 | x | 7 |", { format: "xlsx" }))
    expect(addressed.getWorksheet("S")!.getCell("B3").value).toBe("x")
    expect(addressed.getWorksheet("S")!.getCell("D3").value).toBe(7)
  })

  it("refusals: an unknown format, an answer with nothing to put in a workbook", async () => {
    expect((await refusal(reconstruct("x", { format: "pdf" as never }))).code).toBe("file_unsupported_type")
    expect((await refusal(reconstruct("no table here", { format: "xlsx" }))).code).toBe("file_malformed")
    expect((await refusal(reconstruct("{oops", { format: "xlsx" }))).code).toBe("file_malformed")
  })
})

describe("reconstruct: round trip into the original file", () => {
  it(".docx: only the edited paragraphs change; styles, formatting, table, header, footer and comments are kept", async () => {
    const read = await readFile(docx, { filename: "report.docx", anchors: true })
    const { tokenised, aliases } = await tokenise(read.text)
    for (const value of Object.values(ORIGINALS).filter((v) => read.text.includes(v))) expect(tokenised).not.toContain(value)
    // The model answers with edits of two paragraphs and one table cell, naming people by their aliases.
    const person = aliasOf(tokenised, ORIGINALS.bodyName, read.text)
    const tableEmail = aliasOf(tokenised, ORIGINALS.tableEmail, read.text)
    const answer = `Here are the edits:\n⟦document/1⟧ Reviewed by ${person}; new contact desk@example.org.\n## ⟦document/3⟧ Contact list\n| ⟦document/9⟧ Katherine G. Johnson | ⟦document/10⟧ ${tableEmail} |`
    const bytes = await reconstruct(answer, { format: "docx", original: docx, aliases })

    const html = await docxHtml(bytes)
    expect(html).toContain(`Reviewed by ${ORIGINALS.bodyName}; new contact desk@example.org.`)
    expect(html).not.toContain("Prepared by")
    expect(html).toContain("<h1>Quarterly report</h1>")
    expect(html).toContain("<h2>Contact list</h2>")
    // An untouched paragraph keeps its bold run and its original values.
    expect(html).toContain(`<strong>Payments go to ${ORIGINALS.iban}.</strong>`)
    expect(html).toContain(`<td><p>Katherine G. Johnson</p></td><td><p>${ORIGINALS.tableEmail}</p></td>`)
    // Parts that were not edited are the original bytes.
    const before = openZip(docx, DEFAULT_FILE_LIMITS)
    const after = openZip(bytes, DEFAULT_FILE_LIMITS)
    for (const part of ["word/header1.xml", "word/footer1.xml", "word/comments.xml", "word/styles.xml", "word/numbering.xml", "word/footnotes.xml"]) {
      expect(after.text(part), part).toBe(before.text(part))
    }
    expect([...after.entries.keys()]).toEqual([...before.entries.keys()])
    // Read again on the device: the edit is there and the rest reads as before.
    const reread = await readFile(bytes, { filename: "report.docx" })
    expect(reread.text).toContain(`Confidential - ${ORIGINALS.headerEmail}`)
    expect(reread.text).toContain(`- Comment (${ORIGINALS.commentAuthor}, 2026-01-02)`)
  })

  it(".xlsx: only the edited cells change; formulas, styles, notes and the other sheet are kept", async () => {
    const read = await readFile(xlsx, { filename: "people.xlsx" })
    const { tokenised, aliases } = await tokenise(read.text)
    const person = aliasOf(tokenised, ORIGINALS.cellName, read.text)
    const answer = `⟦People!A2⟧ ${person} Jr.\n⟦People!D2⟧ 150\n⟦People!D3⟧ 999\n⟦People!C2⟧ withheld\n⟦Notes!B1⟧ 1937-01-02`
    const workbook = await loadWorkbook(await reconstruct(answer, { format: "xlsx", original: xlsx, aliases }))
    const people = workbook.getWorksheet("People")!
    expect(people.getCell("A2").value).toBe(`${ORIGINALS.cellName} Jr.`)
    expect(people.getCell("D2").value).toBe(150)
    expect(people.getCell("C2").value).toBe("withheld")
    expect(people.getCell("B2").value).toBe(ORIGINALS.cellEmail)
    // The formula cell keeps its formula (an edit of it is not applied).
    expect(people.getCell("D3").formula).toBe("SUM(D2:D2)")
    expect(people.getCell("A1").font?.bold).toBe(true)
    expect(JSON.stringify(people.getCell("B2").note)).toContain(ORIGINALS.sheetCommentEmail)
    expect(workbook.getWorksheet("Notes")!.getCell("A1").value).toBe("Plain note")
    // A date cell edited as ISO text stays a date.
    expect(workbook.getWorksheet("Notes")!.getCell("B1").value).toEqual(new Date(Date.UTC(1937, 0, 2)))
  })

  it(".xlsx: the sheet given back as readFile's table; changed cells written, new cells and rows inserted, the rest kept", async () => {
    const read = await readFile(xlsx, { filename: "people.xlsx" })
    const { tokenised, aliases } = await tokenise(read.text)
    const person = aliasOf(tokenised, ORIGINALS.cellName, read.text)
    // The model's answer: the People table with A2 changed, a new column E on row 2, a new row 5; D3 (a formula) as read.
    const table = tokenised.slice(tokenised.indexOf("|  | A | B | C | D |"), tokenised.indexOf("### Comments on People")).trim().split("\n")
    const edited = [
      "|  | A | B | C | D | E |",
      "| --- | --- | --- | --- | --- | --- |",
      table[2]! + "  |",
      table[3]!.replace(person, `${person} Jr.`).replace(/ \|$/, " | VIP |"),
      table[4]! + "  |",
      "| 5 | New Person | | | 7 | |"
    ].join("\n")
    const bytes = await reconstruct(`Updated:\n\n## Sheet: People\n\n${edited}\n`, { format: "xlsx", original: xlsx, aliases })
    const workbook = await loadWorkbook(bytes)
    const people = workbook.getWorksheet("People")!
    expect(people.getCell("A2").value).toBe(`${ORIGINALS.cellName} Jr.`)
    expect(people.getCell("B2").value).toBe(ORIGINALS.cellEmail)
    expect(people.getCell("E2").value).toBe("VIP")
    expect(people.getCell("A5").value).toBe("New Person")
    expect(people.getCell("D5").value).toBe(7)
    expect(people.getCell("D3").formula).toBe("SUM(D2:D2)")
    expect(people.getCell("A1").font?.bold).toBe(true)
    expect(workbook.getWorksheet("Notes")!.getCell("A1").value).toBe("Plain note")
    // An anchored edit may also name a cell that is empty in the original.
    const anchored = await loadWorkbook(await reconstruct("⟦People!F7⟧ added", { format: "xlsx", original: xlsx }))
    expect(anchored.getWorksheet("People")!.getCell("F7").value).toBe("added")
    expect(anchored.getWorksheet("People")!.getCell("A2").value).toBe(ORIGINALS.cellName)
  })

  it("an edit naming a paragraph or cell the original does not have refuses the rebuild (file_anchor_unknown)", async () => {
    expect((await refusal(reconstruct("⟦document/999⟧ x", { format: "docx", original: docx }))).code).toBe("file_anchor_unknown")
    expect((await refusal(reconstruct("⟦nothere/1⟧ x", { format: "docx", original: docx }))).code).toBe("file_anchor_unknown")
    expect((await refusal(reconstruct("⟦People!1A⟧ x", { format: "xlsx", original: xlsx }))).code).toBe("file_anchor_unknown")
    expect((await refusal(reconstruct("## Sheet: Missing\n\n|  | A |\n| --- | --- |\n| 1 | x |", { format: "xlsx", original: xlsx }))).code).toBe("file_anchor_unknown")
    expect((await refusal(reconstruct("⟦Missing!A1⟧ x", { format: "xlsx", original: xlsx }))).code).toBe("file_anchor_unknown")
    expect((await refusal(reconstruct("⟦document/1⟧ x", { format: "html", original: docx }))).code).toBe("file_unsupported_type")
    expect((await refusal(reconstruct("⟦document/1⟧ x", { format: "docx", original: new Uint8Array([1, 2, 3]) }))).code).toBe("file_malformed")
  })
})
