/**
 * Documents the file tests read, generated here (no binaries in the repository): a .docx (docx package) and an
 * .xlsx (exceljs) holding names and identifiers in paragraphs, lists, tables, headers, footers, comments, footnotes
 * and cells; a .pptx and a PDF written by hand (their parts are small); and hostile files (zip bombs, encrypted,
 * malformed) built from those.
 */
import {
  AlignmentType,
  CommentRangeEnd,
  CommentRangeStart,
  CommentReference,
  Document,
  Footer,
  FootnoteReferenceRun,
  Header,
  HeadingLevel,
  LevelFormat,
  Packer,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun
} from "docx"
import ExcelJS from "exceljs"
import { Deflate, strToU8, zipSync } from "fflate"

/** Every original value the fixtures hold: none of them may leave the device. */
export const ORIGINALS = {
  bodyName: "Margaret Hamilton",
  email: "margaret.hamilton@example.org",
  phone: "+44 20 7946 0958",
  iban: "GB82 WEST 1234 5698 7654 32",
  tableName: "Katherine Johnson",
  tableEmail: "k.johnson@example.com",
  headerEmail: "records@hamilton-labs.example",
  footerPhone: "+1 415 555 0134",
  commentAuthor: "Grace Hopper",
  commentEmail: "grace.hopper@example.net",
  footnoteEmail: "footnote.person@example.org",
  listEmail: "list.item@example.org",
  cellName: "Dorothy Vaughan",
  cellEmail: "dorothy.vaughan@example.org",
  cellPhone: "+33 1 42 68 53 00",
  sheetCommentEmail: "auditor@example.co.uk",
  sheetHeaderEmail: "finance@example.org",
  slideEmail: "slides.owner@example.org",
  notesPhone: "+49 30 901820",
  pdfEmail: "pdf.author@example.org"
} as const

export const makeDocx = async (): Promise<Uint8Array> => {
  const o = ORIGINALS
  const doc = new Document({
    creator: o.bodyName,
    comments: {
      children: [{ id: 0, author: o.commentAuthor, initials: "GH", date: new Date("2026-01-02T03:04:05Z"), children: [new Paragraph(`Please check with ${o.commentEmail} first.`)] }]
    },
    footnotes: { 1: { children: [new Paragraph(`Source: ${o.footnoteEmail}`)] } },
    numbering: {
      config: [{ reference: "steps", levels: [{ level: 0, format: LevelFormat.DECIMAL, text: "%1.", alignment: AlignmentType.START }] }]
    },
    sections: [
      {
        headers: { default: new Header({ children: [new Paragraph(`Confidential - ${o.headerEmail}`)] }) },
        footers: { default: new Footer({ children: [new Paragraph(`Call ${o.footerPhone}`)] }) },
        children: [
          new Paragraph({ text: "Quarterly report", heading: HeadingLevel.HEADING_1 }),
          new Paragraph({
            children: [
              new CommentRangeStart(0),
              new TextRun(`Prepared by ${o.bodyName}, reachable at ${o.email} or ${o.phone}.`),
              new CommentRangeEnd(0),
              new TextRun({ children: [new CommentReference(0)] }),
              new FootnoteReferenceRun(1)
            ]
          }),
          new Paragraph({ children: [new TextRun({ text: `Payments go to ${o.iban}.`, bold: true })] }),
          new Paragraph({ text: "Contacts", heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: `Bullet for ${o.listEmail}`, bullet: { level: 0 } }),
          new Paragraph({ text: "First step", numbering: { reference: "steps", level: 0 } }),
          new Paragraph({ text: "Second step", numbering: { reference: "steps", level: 0 } }),
          new Table({
            rows: [
              new TableRow({ children: [new TableCell({ children: [new Paragraph("Name")] }), new TableCell({ children: [new Paragraph("Email")] })] }),
              new TableRow({ children: [new TableCell({ children: [new Paragraph(o.tableName)] }), new TableCell({ children: [new Paragraph(o.tableEmail)] })] })
            ]
          }),
          new Paragraph("End of report.")
        ]
      }
    ]
  })
  return new Uint8Array(await Packer.toBuffer(doc))
}

export const makeXlsx = async (): Promise<Uint8Array> => {
  const o = ORIGINALS
  const workbook = new ExcelJS.Workbook()
  const people = workbook.addWorksheet("People")
  people.headerFooter.oddHeader = `&C${o.sheetHeaderEmail}`
  people.addRow(["Name", "Email", "Phone", "Amount"])
  people.addRow([o.cellName, o.cellEmail, o.cellPhone, 120])
  people.addRow(["Total", "", "", { formula: "SUM(D2:D2)", result: 120 }])
  people.getCell("A1").font = { bold: true }
  people.getCell("B2").note = `Checked by ${o.sheetCommentEmail}`
  const notes = workbook.addWorksheet("Notes")
  notes.getCell("A1").value = "Plain note"
  // A date is a serial number with a date format: read as ISO text.
  notes.getCell("B1").value = new Date(Date.UTC(1936, 7, 17))
  notes.getCell("B1").numFmt = "yyyy-mm-dd"
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}

const PPTX_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>`
const R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
const slideXml = (title: string, body: ReadonlyArray<string>, table?: ReadonlyArray<ReadonlyArray<string>>) =>
  `<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree>` +
  `<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${title}</a:t></a:r></a:p></p:txBody></p:sp>` +
  `<p:sp><p:nvSpPr><p:nvPr><p:ph idx="1"/></p:nvPr></p:nvSpPr><p:txBody>${body.map((t, i) => `<a:p><a:pPr lvl="${i % 2}"/><a:r><a:t>${t}</a:t></a:r></a:p>`).join("")}</p:txBody></p:sp>` +
  (table ? `<p:graphicFrame><a:graphic><a:graphicData><a:tbl>${table.map((row) => `<a:tr>${row.map((c) => `<a:tc><a:txBody><a:p><a:r><a:t>${c}</a:t></a:r></a:p></a:txBody></a:tc>`).join("")}</a:tr>`).join("")}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>` : "") +
  `</p:spTree></p:cSld></p:sld>`

/** Two slides whose file names run against their order in the presentation (slide2.xml comes first), one with notes. */
export const makePptx = (): Uint8Array => {
  const o = ORIGINALS
  return zipSync({
    "[Content_Types].xml": strToU8(PPTX_TYPES),
    "ppt/presentation.xml": strToU8(`<?xml version="1.0" encoding="UTF-8"?><p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="${R}"><p:sldIdLst><p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId1"/></p:sldIdLst></p:presentation>`),
    "ppt/_rels/presentation.xml.rels": strToU8(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/slide" Target="slides/slide1.xml"/><Relationship Id="rId2" Type="${R}/slide" Target="slides/slide2.xml"/></Relationships>`),
    "ppt/slides/slide2.xml": strToU8(slideXml("Opening", [`Owner: ${o.slideEmail}`, "Agenda item"])),
    "ppt/slides/_rels/slide2.xml.rels": strToU8(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId9" Type="${R}/notesSlide" Target="../notesSlides/notesSlide1.xml"/></Relationships>`),
    "ppt/notesSlides/notesSlide1.xml": strToU8(slideXml("ignored", [`Call ${o.notesPhone} before presenting`]).replace("<p:ph type=\"title\"/>", "<p:ph type=\"sldImg\"/>")),
    "ppt/slides/slide1.xml": strToU8(slideXml("Closing", ["Thanks"], [["Name", "Role"], [o.tableName, "Lead"]]))
  })
}

/** A one-page PDF whose text is `lines` (Helvetica), written object by object with a correct cross-reference table. */
export const makePdf = (lines: ReadonlyArray<string>, extraTrailer = ""): Uint8Array => {
  const content = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${l.replace(/[()\\]/g, "\\$&")}) '`).join(" ")} ET`
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  ]
  let pdf = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(pdf.length)
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = pdf.length
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${extraTrailer}>>\nstartxref\n${xref}\n%%EOF\n`
  return strToU8(pdf)
}

/** A PDF protected by a user password (standard security handler, RC4 40-bit): it cannot be opened without it. */
export const makeEncryptedPdf = (): Uint8Array =>
  makePdf(["secret"], `/Encrypt << /Filter /Standard /V 1 /R 2 /O <${"ab".repeat(32)}> /U <${"cd".repeat(32)}> /P -4 >> /ID [<${"01".repeat(16)}> <${"01".repeat(16)}>] `)

/** What Office writes for a password-protected .docx: an OLE compound file holding an `EncryptedPackage` stream. */
export const makeEncryptedOffice = (): Uint8Array => {
  const bytes = new Uint8Array(4096)
  bytes.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 0)
  const name = "EncryptedPackage"
  for (let i = 0; i < name.length; i++) bytes[1024 + i * 2] = name.charCodeAt(i)
  return bytes
}

/** Raw deflate of `size` zero bytes, made in 1 MB steps (a bomb's payload, without holding it in memory). */
const deflatedZeros = (size: number): Uint8Array => {
  const cached = zerosCache.get(size)
  if (cached !== undefined) return cached
  const chunks: Array<Uint8Array> = []
  const deflate = new Deflate({ level: 6 }, (chunk) => chunks.push(chunk))
  const step = new Uint8Array(1024 * 1024)
  for (let left = size; left > 0; left -= step.length) deflate.push(left > step.length ? step : step.subarray(0, left), left <= step.length)
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  zerosCache.set(size, out)
  return out
}
const zerosCache = new Map<number, Uint8Array>()

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

/**
 * A .docx-shaped zip whose word/document.xml is `expandedSize` zero bytes deflated, declared in its headers as
 * `declaredSize` (a lying bomb declares little and expands a lot). Written by hand: no zip library writes a lie.
 */
export const makeZipBomb = (expandedSize: number, declaredSize: number): Uint8Array => {
  const name = strToU8("word/document.xml")
  const data = deflatedZeros(expandedSize)
  const local = new Uint8Array(30 + name.length)
  const lv = new DataView(local.buffer)
  lv.setUint32(0, 0x04034b50, true)
  lv.setUint16(4, 20, true)
  lv.setUint16(8, 8, true)
  lv.setUint32(14, crcTable[0]!, true)
  lv.setUint32(18, data.length, true)
  lv.setUint32(22, declaredSize, true)
  lv.setUint16(26, name.length, true)
  local.set(name, 30)
  const central = new Uint8Array(46 + name.length)
  const cv = new DataView(central.buffer)
  cv.setUint32(0, 0x02014b50, true)
  cv.setUint16(4, 20, true)
  cv.setUint16(6, 20, true)
  cv.setUint16(10, 8, true)
  cv.setUint32(20, data.length, true)
  cv.setUint32(24, declaredSize, true)
  cv.setUint16(28, name.length, true)
  cv.setUint32(42, 0, true)
  central.set(name, 46)
  const end = new Uint8Array(22)
  const ev = new DataView(end.buffer)
  ev.setUint32(0, 0x06054b50, true)
  ev.setUint16(8, 1, true)
  ev.setUint16(10, 1, true)
  ev.setUint32(12, central.length, true)
  ev.setUint32(16, local.length + data.length, true)
  const out = new Uint8Array(local.length + data.length + central.length + end.length)
  out.set(local, 0)
  out.set(data, local.length)
  out.set(central, local.length + data.length)
  out.set(end, local.length + data.length + central.length)
  return out
}

/** A zip package with `count` tiny entries. */
export const makeManyEntries = (count: number): Uint8Array =>
  zipSync(Object.fromEntries(Array.from({ length: count }, (_, i) => [`word/e${i}.xml`, strToU8("<a/>")])), { level: 0 })

/** The same package with the "encrypted" flag set on every entry of its central directory. */
export const withEncryptedEntries = (zip: Uint8Array): Uint8Array => {
  const out = new Uint8Array(zip)
  const view = new DataView(out.buffer)
  for (let i = 0; i + 4 <= out.length; i++) if (view.getUint32(i, true) === 0x02014b50) view.setUint16(i + 8, view.getUint16(i + 8, true) | 1, true)
  return out
}
