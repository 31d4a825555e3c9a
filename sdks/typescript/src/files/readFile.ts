/**
 * `readFile(bytes, { filename })`: an attachment read on this device into markdown text and its structure, ready to
 * be tokenised. The type comes from the file name (or the media type when the name has no known extension) and is
 * checked against the bytes. Each reader, and the library it needs, is loaded only when a file of its type is read,
 * so an application that never reads a file does not load them.
 *
 * Refusals are FileErrors with stable codes (see FileError.ts); each is decided from sizes and headers before the
 * expensive work, so a hostile file costs bounded time and memory.
 */
import { FileError } from "./FileError.ts"
import { fileLimits, type FileLimits } from "./limits.ts"
import type { FileFormat, ReaderOutput, ReadFileResult } from "./types.ts"
import { isZip } from "./zip.ts"

export interface ReadFileOptions {
  /** The file's name; its extension decides the reader (.docx .xlsx .pptx .pdf .html .htm .md .markdown .csv .txt). */
  readonly filename: string
  /** The media type the file came with; used when the name has no known extension. */
  readonly mediaType?: string
  /** Size limits (default: 20 MB file, 200 MB expanded, 10,000 package entries). */
  readonly limits?: Partial<FileLimits>
  /** Prefix paragraphs with anchors for a round-trip edit (see `reconstruct` with `original`). Default false. */
  readonly anchors?: boolean
}

export const MEDIA_TYPES: Readonly<Record<FileFormat, string>> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  pdf: "application/pdf",
  html: "text/html",
  md: "text/markdown",
  csv: "text/csv",
  txt: "text/plain"
}

const EXTENSIONS: Readonly<Record<string, FileFormat>> = {
  docx: "docx",
  xlsx: "xlsx",
  pptx: "pptx",
  pdf: "pdf",
  html: "html",
  htm: "html",
  md: "md",
  markdown: "md",
  csv: "csv",
  txt: "txt",
  text: "txt"
}

/** The format of a file by its name, else by its media type; undefined when neither is one the readers handle. */
export const formatOf = (filename: string, mediaType?: string): FileFormat | undefined => {
  const dot = filename.lastIndexOf(".")
  const byName = dot < 0 ? undefined : EXTENSIONS[filename.slice(dot + 1).toLowerCase()]
  if (byName !== undefined) return byName
  const type = mediaType?.split(";")[0]?.trim().toLowerCase()
  return (Object.keys(MEDIA_TYPES) as Array<FileFormat>).find((f) => MEDIA_TYPES[f] === type)
}

/** An OLE compound file: what Office writes for a password-protected .docx/.xlsx/.pptx (and for old .doc/.xls). */
const isCompoundFile = (bytes: Uint8Array): boolean =>
  bytes.length >= 8 && [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1].every((b, i) => bytes[i] === b)

const hasUtf16 = (bytes: Uint8Array, text: string): boolean => {
  const needle = new Uint8Array(text.length * 2)
  for (let i = 0; i < text.length; i++) needle[i * 2] = text.charCodeAt(i)
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer
    return true
  }
  return false
}

const checkPackage = (bytes: Uint8Array, format: FileFormat): void => {
  if (isZip(bytes)) return
  if (isCompoundFile(bytes)) {
    if (hasUtf16(bytes, "EncryptedPackage")) {
      throw new FileError("file_encrypted", `The .${format} file is password-protected (encrypted); it cannot be read on this device.`)
    }
    throw new FileError("file_unsupported_type", `The file is an old binary Office document, not .${format}; save it as .${format} and try again.`)
  }
  throw new FileError("file_malformed", `The file is named .${format} but is not a .${format} package.`)
}

export const readFile = async (bytes: Uint8Array, options: ReadFileOptions): Promise<ReadFileResult> => {
  const limits = fileLimits(options.limits)
  const filename = options.filename
  const format = formatOf(filename, options.mediaType)
  if (format === undefined) {
    throw new FileError(
      "file_unsupported_type",
      `${JSON.stringify(filename)}${options.mediaType ? ` (${options.mediaType})` : ""} is not a type this device reads: .docx, .xlsx, .pptx, .pdf, .html, .md, .csv or .txt.`
    )
  }
  if (bytes.byteLength > limits.maxBytes) {
    throw new FileError("file_too_large", `${JSON.stringify(filename)} is ${bytes.byteLength} bytes, over the limit of ${limits.maxBytes} bytes; it was not read.`)
  }
  const readerOptions = { anchors: options.anchors ?? false }
  let output: ReaderOutput
  switch (format) {
    case "docx":
      checkPackage(bytes, format)
      output = (await import("./readDocx.ts")).readDocx(bytes, limits, readerOptions)
      break
    case "xlsx":
      checkPackage(bytes, format)
      output = (await import("./readXlsx.ts")).readXlsx(bytes, limits)
      break
    case "pptx":
      checkPackage(bytes, format)
      output = (await import("./readPptx.ts")).readPptx(bytes, limits, readerOptions)
      break
    case "pdf": {
      const pdf = await import("./readPdf.ts")
      if (!pdf.isPdf(bytes)) throw new FileError("file_malformed", `${JSON.stringify(filename)} is named .pdf but is not a PDF.`)
      output = await pdf.readPdf(bytes)
      break
    }
    case "html": {
      const { decodeUtf8 } = await import("./readText.ts")
      output = (await import("./readHtml.ts")).readHtml(decodeUtf8(bytes, "HTML file"))
      break
    }
    case "md":
      output = (await import("./readText.ts")).readMarkdown(bytes)
      break
    case "csv":
      output = (await import("./readText.ts")).readCsv(bytes)
      break
    case "txt":
      output = (await import("./readText.ts")).readPlainText(bytes)
      break
  }
  return { filename, format, mediaType: MEDIA_TYPES[format], text: output.text, structure: output.structure }
}
