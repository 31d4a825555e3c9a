/**
 * .pdf: the text of each page in order (unpdf: PDF.js for every JavaScript runtime, loaded only when a PDF is read).
 * A password-protected PDF is refused as encrypted; a broken one as malformed. Layout (columns, tables) is not
 * recovered: PDF text comes as the page draws it.
 */
import { FileError } from "./FileError.ts"
import type { ReaderOutput } from "./types.ts"

export const isPdf = (bytes: Uint8Array): boolean => new TextDecoder().decode(bytes.subarray(0, 1024)).includes("%PDF-")

export const readPdf = async (bytes: Uint8Array): Promise<ReaderOutput> => {
  const { extractText, getDocumentProxy } = await import("unpdf")
  let pages: Array<string>
  try {
    // PDF.js may transfer the buffer it is given: it gets a copy.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { stopAtErrors: true })
    try {
      pages = (await extractText(pdf, { mergePages: false })).text
    } finally {
      await pdf.cleanup()
    }
  } catch (error) {
    const name = (error as { name?: string }).name
    if (name === "PasswordException") throw new FileError("file_encrypted", "The PDF is password-protected; it cannot be read on this device.", error)
    throw new FileError("file_malformed", `The PDF cannot be read (${(error as Error).message}).`, error)
  }
  const blocks = pages.flatMap((text, i) => [`## Page ${i + 1}`, text.trim()])
  return { text: blocks.join("\n\n"), structure: { headings: [], tables: 0, listItems: 0, parts: [], pages: pages.length } }
}
