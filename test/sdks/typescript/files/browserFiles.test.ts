// Files in a browser: the SDK's browser entry bundled as an application's bundler ships it (code splitting,
// sdks/typescript/browserBundle.ts bundleBrowserApp), served from 127.0.0.1 and run in Debian's Chromium through
// playwright-core. readFile reads a .docx, an .xlsx, a .pptx and a PDF in the page and reconstruct writes .docx and
// .xlsx there; the rebuilt files open with mammoth and exceljs here. The readers' and writers' chunks (and their
// libraries) are fetched only once a file is read or written.
import ExcelJS from "exceljs"
import mammoth from "mammoth"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundleBrowserApp } from "../../../../sdks/typescript/browserBundle.ts"
import { launchChromium } from "../../../support/chromium.ts"
import { makeDocx, makePdf, makePptx, makeXlsx, ORIGINALS } from "./fixtures.ts"

let site: Server
let browser: Browser
let page: Page
const requested: Array<string> = []
const pageErrors: Array<string> = []

beforeAll(async () => {
  const files = await bundleBrowserApp()
  site = createServer((req, res) => {
    const path = (req.url ?? "/").slice(1)
    const body = path === "" ? '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>files</body></html>' : files.get(path)
    if (body === undefined) return void res.writeHead(404).end()
    res.writeHead(200, { "content-type": path === "" ? "text/html; charset=utf-8" : "text/javascript; charset=utf-8" }).end(body)
  })
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
  browser = await launchChromium()
  page = await browser.newPage()
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("request", (request) => requested.push(new URL(request.url()).pathname))
  await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`)
})
afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => site?.close(resolve))
})

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

describe("files in Chromium", () => {
  it("loading the SDK fetches no reader, writer or file library chunk (only small shared chunks)", async () => {
    // A string: the test runner would rewrite an import() in a function's source.
    expect(await page.evaluate("import('/browser.js').then((sdk) => { window.sdk = sdk; return typeof sdk.readFile })")).toBe("function")
    expect(requested.filter((p) => p.startsWith("/chunks/") && !p.startsWith("/chunks/chunk-"))).toEqual([])
  })

  it("readFile reads .docx, .xlsx, .pptx and PDF in the page; reconstruct writes .docx and .xlsx that mammoth and exceljs open", async () => {
    const inputs = { docx: b64(await makeDocx()), xlsx: b64(await makeXlsx()), pptx: b64(makePptx()), pdf: b64(makePdf([`Written by ${ORIGINALS.pdfEmail}`])) }
    const out = await page.evaluate(async (inputs) => {
      const sdk = (window as unknown as { sdk: any }).sdk
      const bytes = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0))
      const text: Record<string, string> = {}
      for (const [format, data] of Object.entries(inputs)) text[format] = (await sdk.readFile(bytes(data), { filename: `f.${format}` })).text
      const toB64 = (u: Uint8Array) => {
        let s = ""
        for (const b of u) s += String.fromCharCode(b)
        return btoa(s)
      }
      const docx = await sdk.reconstruct("# Hello <PERSON_1_abcd>\n\n| a | b |\n| --- | --- |\n| 1 | 2 |", { format: "docx", aliases: { "<PERSON_1_abcd>": "Ada Lovelace" } })
      const xlsx = await sdk.reconstruct("## Sheet: S\n\n| name | n |\n| --- | --- |\n| Ada Lovelace | 7 |", { format: "xlsx" })
      let refused = ""
      try {
        await sdk.readFile(new Uint8Array([1, 2, 3]), { filename: "x.docx" })
      } catch (error) {
        refused = (error as { code: string }).code
      }
      return { text, docx: toB64(docx), xlsx: toB64(xlsx), refused }
    }, inputs)
    expect(out.text.docx).toContain(`| ${ORIGINALS.tableName} | ${ORIGINALS.tableEmail} |`)
    expect(out.text.docx).toContain(`Confidential - ${ORIGINALS.headerEmail}`)
    expect(out.text.xlsx).toContain(`| 2 | ${ORIGINALS.cellName} | ${ORIGINALS.cellEmail} |`)
    expect(out.text.pptx).toContain("## Slide 1: Opening")
    expect(out.text.pdf).toContain(ORIGINALS.pdfEmail)
    expect(out.refused).toBe("file_malformed")
    const html = (await mammoth.convertToHtml({ buffer: Buffer.from(out.docx, "base64") })).value
    expect(html).toContain("<h1>Hello Ada Lovelace</h1>")
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.from(out.xlsx, "base64") as never)
    expect(workbook.getWorksheet("S")!.getCell("A2").value).toBe("Ada Lovelace")
    expect(workbook.getWorksheet("S")!.getCell("B2").value).toBe(7)
    expect(requested.some((p) => /^\/chunks\/readDocx-/.test(p))).toBe(true)
    expect(pageErrors).toEqual([])
  })
})
