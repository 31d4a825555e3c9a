// readFile on the device: each supported type read into markdown with its structure, and every hostile or broken
// file refused with its stable code, within bounded time and memory.
import { strToU8 } from "fflate"
import { beforeAll, describe, expect, it } from "vitest"
import { FileError, readFile } from "../../../../sdks/typescript/src/files/index.ts"
import {
  makeDocx,
  makeEncryptedOffice,
  makeEncryptedPdf,
  makeManyEntries,
  makePdf,
  makePptx,
  makeXlsx,
  makeZipBomb,
  ORIGINALS,
  withEncryptedEntries
} from "./fixtures.ts"

const refusal = async (promise: Promise<unknown>): Promise<FileError> => {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(FileError)
    return error as FileError
  }
  throw new Error("expected a refusal")
}

let docx: Uint8Array
let xlsx: Uint8Array
beforeAll(async () => {
  docx = await makeDocx()
  xlsx = await makeXlsx()
})

describe("readFile: structure of each type", () => {
  it(".docx: headings, lists, tables as markdown, headers, footers, footnotes and comments with their authors", async () => {
    const read = await readFile(docx, { filename: "report.docx" })
    expect(read.format).toBe("docx")
    expect(read.text).toContain("# Quarterly report")
    expect(read.text).toContain("## Contacts")
    expect(read.text).toContain(`- Bullet for ${ORIGINALS.listEmail}`)
    expect(read.text).toMatch(/1\. First step\n\n2\. Second step/)
    expect(read.text).toContain(`| ${ORIGINALS.tableName} | ${ORIGINALS.tableEmail} |`)
    expect(read.text).toContain(`## Headers\n\nConfidential - ${ORIGINALS.headerEmail}`)
    expect(read.text).toContain(`## Footers\n\nCall ${ORIGINALS.footerPhone}`)
    expect(read.text).toContain(`Source: ${ORIGINALS.footnoteEmail}`)
    expect(read.text).toContain(`- Comment (${ORIGINALS.commentAuthor}, 2026-01-02): Please check with ${ORIGINALS.commentEmail} first.`)
    for (const value of [ORIGINALS.bodyName, ORIGINALS.email, ORIGINALS.phone, ORIGINALS.iban]) expect(read.text).toContain(value)
    expect(read.structure).toMatchObject({
      headings: [{ level: 1, text: "Quarterly report" }, { level: 2, text: "Contacts" }],
      tables: 1,
      listItems: 3,
      parts: ["headers", "footers", "footnotes", "comments"]
    })
  })

  it(".docx with anchors: every paragraph carries ⟦part/n⟧, body, table cells and side parts alike", async () => {
    const read = await readFile(docx, { filename: "report.docx", anchors: true })
    expect(read.text).toContain("# ⟦document/0⟧ Quarterly report")
    expect(read.text).toContain(`| ⟦document/9⟧ ${ORIGINALS.tableName} | ⟦document/10⟧ ${ORIGINALS.tableEmail} |`)
    expect(read.text).toContain(`⟦header1/0⟧ Confidential`)
  })

  it(".xlsx: each sheet as a table with row numbers and column letters, formulas' values, comments, header text", async () => {
    const read = await readFile(xlsx, { filename: "people.xlsx" })
    expect(read.text).toContain("## Sheet: People")
    expect(read.text).toContain("|  | A | B | C | D |")
    expect(read.text).toContain(`| 2 | ${ORIGINALS.cellName} | ${ORIGINALS.cellEmail} | ${ORIGINALS.cellPhone} | 120 |`)
    expect(read.text).toContain("| 3 | Total |  |  | 120 |")
    expect(read.text).toContain(`- B2 (Author): Checked by ${ORIGINALS.sheetCommentEmail}`)
    expect(read.text).toContain(ORIGINALS.sheetHeaderEmail)
    expect(read.text).toContain("## Sheet: Notes")
    expect(read.text).toContain("| 1 | Plain note | 1936-08-17 |")
    expect(read.structure.sheets).toEqual([{ name: "People", rows: 3, columns: 4 }, { name: "Notes", rows: 1, columns: 2 }])
  })

  it(".pptx: slides in presentation order (not file order) with titles, levels, tables and speaker notes", async () => {
    const read = await readFile(makePptx(), { filename: "deck.pptx" })
    expect(read.text.indexOf("## Slide 1: Opening")).toBeLessThan(read.text.indexOf("## Slide 2: Closing"))
    expect(read.text).toContain(`Owner: ${ORIGINALS.slideEmail}\n\n  Agenda item`)
    expect(read.text).toContain(`Notes:\nCall ${ORIGINALS.notesPhone} before presenting`)
    expect(read.text).not.toContain("ignored")
    expect(read.text).toContain(`| ${ORIGINALS.tableName} | Lead |`)
    expect(read.structure).toMatchObject({ slides: 2, tables: 1, parts: ["notes"] })
  })

  it(".pdf: the text of each page", async () => {
    const read = await readFile(makePdf([`Written by ${ORIGINALS.pdfEmail}`, "Second line"]), { filename: "memo.pdf" })
    expect(read.text).toBe(`## Page 1\n\nWritten by ${ORIGINALS.pdfEmail}\nSecond line`)
    expect(read.structure.pages).toBe(1)
  })

  it(".html: headings, lists, tables, no scripts or styles", async () => {
    const html = `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body><h1>Team</h1><script>var secret = "x"</script>
      <p>Lead: <b>Ada Lovelace</b>, ada@example.org</p><ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>
      <table><tr><th>Name</th><th>Phone</th></tr><tr><td>Alan | Turing</td><td>+44 20 7946 0000</td></tr></table></body></html>`
    const read = await readFile(strToU8(html), { filename: "team.html" })
    expect(read.text).toBe(
      "Title: T\n\n# Team\n\nLead: Ada Lovelace, ada@example.org\n\n- one\n\n- two\n\n1. first\n\n| Name | Phone |\n| --- | --- |\n| Alan \\| Turing | +44 20 7946 0000 |"
    )
    expect(read.structure).toMatchObject({ headings: [{ level: 1, text: "Team" }], tables: 1, listItems: 3 })
  })

  it(".csv (quoted fields, semicolons) as a markdown table; .md and .txt as they are", async () => {
    const csv = await readFile(strToU8('name;email\n"Hopper; Grace";grace@example.org\r\n"say ""hi""";x\n'), { filename: "a.csv" })
    expect(csv.text).toBe('| name | email |\n| --- | --- |\n| Hopper; Grace | grace@example.org |\n| say "hi" | x |')
    const md = await readFile(strToU8("# Title\n\n- item\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"), { filename: "notes.md" })
    expect(md.structure).toMatchObject({ headings: [{ level: 1, text: "Title" }], listItems: 1, tables: 1 })
    const txt = await readFile(strToU8("\uFEFFline one\r\nline two"), { filename: "a.txt" })
    expect(txt.text).toBe("line one\nline two")
  })

  it("the media type decides when the name has no known extension", async () => {
    const read = await readFile(strToU8("hello"), { filename: "upload", mediaType: "text/plain; charset=utf-8" })
    expect(read.format).toBe("txt")
  })
})

describe("readFile: refusals with stable codes", () => {
  it("file_unsupported_type for a type no reader handles", async () => {
    expect((await refusal(readFile(strToU8("x"), { filename: "photo.png", mediaType: "image/png" }))).code).toBe("file_unsupported_type")
  })

  it("file_too_large over the limit (default 20 MB; configurable), before reading", async () => {
    expect((await refusal(readFile(new Uint8Array(20_000_001), { filename: "big.txt" }))).code).toBe("file_too_large")
    const small = await refusal(readFile(strToU8("0123456789"), { filename: "a.txt", limits: { maxBytes: 5 } }))
    expect(small.code).toBe("file_too_large")
    expect(small.httpStatus).toBe(413)
  })

  it("file_malformed: a .docx that is not a zip, a broken zip, broken XML, a .pdf that is not a PDF, text that is not UTF-8", async () => {
    expect((await refusal(readFile(strToU8("plain words"), { filename: "a.docx" }))).code).toBe("file_malformed")
    expect((await refusal(readFile(docx.subarray(0, docx.length - 30), { filename: "a.docx" }))).code).toBe("file_malformed")
    const { zipSync } = await import("fflate")
    const brokenXml = zipSync({ "word/document.xml": strToU8("<w:document><w:body><w:p></w:body>") })
    expect((await refusal(readFile(brokenXml, { filename: "a.docx" }))).code).toBe("file_malformed")
    const notWord = zipSync({ "other.xml": strToU8("<a/>") })
    expect((await refusal(readFile(notWord, { filename: "a.docx" }))).code).toBe("file_malformed")
    expect((await refusal(readFile(strToU8("%PDF-1.4\ngarbage"), { filename: "a.pdf" }))).code).toBe("file_malformed")
    expect((await refusal(readFile(strToU8("no pdf here"), { filename: "a.pdf" }))).code).toBe("file_malformed")
    expect((await refusal(readFile(new Uint8Array([0xff, 0xfe, 0x00, 0xd8]), { filename: "a.txt" }))).code).toBe("file_malformed")
  })

  it("file_malformed, nothing expanded: an entity bomb and an external entity in a DTD", async () => {
    const { zipSync } = await import("fflate")
    const withDoctype = (dtd: string, use: string) =>
      zipSync({ "word/document.xml": strToU8(`<?xml version="1.0"?><!DOCTYPE w:document [${dtd}]><w:document xmlns:w="x"><w:body><w:p><w:r><w:t>${use}</w:t></w:r></w:p></w:body></w:document>`) })
    const bomb = withDoctype(`<!ENTITY a "AAAAAAAAAA">${Array.from({ length: 9 }, (_, i) => `<!ENTITY ${"b".repeat(i + 1)} "${`&${i === 0 ? "a" : "b".repeat(i)};`.repeat(10)}">`).join("")}`, "&bbbbbbbbb;")
    expect((await refusal(readFile(bomb, { filename: "laughs.docx" }))).code).toBe("file_malformed")
    const external = withDoctype(`<!ENTITY e SYSTEM "file:///etc/passwd">`, "&e;")
    expect((await refusal(readFile(external, { filename: "xxe.docx" }))).code).toBe("file_malformed")
  })

  it("file_encrypted: a password-protected Office file, encrypted zip entries, a password-protected PDF", async () => {
    expect((await refusal(readFile(makeEncryptedOffice(), { filename: "locked.docx" }))).code).toBe("file_encrypted")
    expect((await refusal(readFile(withEncryptedEntries(xlsx), { filename: "locked.xlsx" }))).code).toBe("file_encrypted")
    expect((await refusal(readFile(makeEncryptedPdf(), { filename: "locked.pdf" }))).code).toBe("file_encrypted")
  })

  it("file_zip_bomb: declared expansion over the limit refused before inflating; a lying entry stopped while inflating; too many entries", async () => {
    // 100 MB of zeros in ~100 KB, declared as 300 MB: refused from the central directory alone, nothing inflated.
    const honest = makeZipBomb(100_000_000, 300_000_000)
    const before = process.memoryUsage().arrayBuffers
    expect((await refusal(readFile(honest, { filename: "bomb.docx" }))).code).toBe("file_zip_bomb")
    // The same payload declared as 1 KB: inflation stops at the first step that passes 1 KB, not at 100 MB.
    expect((await refusal(readFile(makeZipBomb(100_000_000, 1000), { filename: "liar.docx" }))).code).toBe("file_zip_bomb")
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024)
    expect((await refusal(readFile(makeManyEntries(50), { filename: "many.docx", limits: { maxEntries: 40 } }))).code).toBe("file_zip_bomb")
  })
})
