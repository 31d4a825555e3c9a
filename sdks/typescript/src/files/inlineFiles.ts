/**
 * Attachments in a relay request, read on this device: every OpenAI `file` content part
 * (`{ type: "file", file: { filename, file_data: "data:<mime>;base64,..." } }`) and every Anthropic `document` block
 * (`{ type: "document", source: { type: "base64" | "text" | "content", ... }, title?, context? }`) becomes a text
 * part holding the file's text under a short header naming it. The tokeniser then treats that text like any other
 * user text, and the attestation covers the result: the provider never receives the file, only its tokenised text.
 *
 * A file the device cannot read refuses the whole request (FileError: nothing is sent). So does a reference to a
 * file stored elsewhere (an OpenAI `file_id`, an Anthropic `url` or `file` source): the device cannot tokenise what
 * it cannot read, and the provider would read it in the clear.
 */
import { FileError } from "./FileError.ts"
import { fileLimits, type FileLimits } from "./limits.ts"
import { formatOf, readFile } from "./readFile.ts"
import type { FileFormat } from "./types.ts"

export interface InlineFilesOptions {
  readonly limits?: Partial<FileLimits>
}

export interface InlinedFile {
  readonly filename: string
  readonly format: FileFormat
  readonly bytes: number
}

export interface InlinedRequest {
  /** The body with its files replaced by text parts (a copy when anything was replaced; else the input). */
  readonly body: unknown
  readonly files: ReadonlyArray<InlinedFile>
  /** Characters of base64 file data the request carried (what the body shrank by, before the files' text). */
  readonly fileDataChars: number
}

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** The text part that stands for a file: a header naming it, its text, an end marker. */
export const fileTextPart = (name: string, text: string, note?: string): { type: "text"; text: string } => ({
  type: "text",
  text: `--- File: ${name}${note ? ` (${note})` : ""} ---\n${text}\n--- End of file: ${name} ---`
})

/** Bytes a base64 text decodes to, from its length alone (so an oversized file is refused before decoding). */
const decodedLength = (base64: string): number => {
  const clean = base64.length - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0)
  return Math.floor((clean * 3) / 4)
}

const decodeBase64 = (base64: string, name: string): Uint8Array => {
  try {
    const binary = atob(base64.replace(/\s+/g, ""))
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch (error) {
    throw new FileError("file_malformed", `The data of ${JSON.stringify(name)} is not valid base64.`, error)
  }
}

/** A data URL or bare base64: its media type (if any) and its base64 text. */
const splitDataUrl = (data: string): { readonly mediaType: string | undefined; readonly base64: string } => {
  const m = /^data:([^;,]*)(?:;[^,]*)?;base64,/i.exec(data.slice(0, 512))
  return m === null ? { mediaType: undefined, base64: data } : { mediaType: m[1] === "" ? undefined : m[1], base64: data.slice(m[0].length) }
}

/** A name the readers know, for a document that came without one: its title when that names a known type. */
const nameFor = (given: string | undefined, mediaType: string | undefined): string => {
  if (given !== undefined && formatOf(given) !== undefined) return given
  const format = formatOf("", mediaType)
  const base = given ?? "document"
  return format === undefined ? base : `${base}.${format}`
}

export const inlineFiles = async (route: string, body: unknown, options: InlineFilesOptions = {}): Promise<InlinedRequest> => {
  if (route === "embeddings" || !isObject(body) || !Array.isArray(body.messages)) return { body, files: [], fileDataChars: 0 }
  const limits = fileLimits(options.limits)
  const files: Array<InlinedFile> = []
  let fileDataChars = 0

  const readBase64 = async (base64: string, filename: string, mediaType: string | undefined): Promise<string> => {
    fileDataChars += base64.length
    if (formatOf(filename, mediaType) === undefined) {
      throw new FileError(
        "file_unsupported_type",
        `${JSON.stringify(filename)}${mediaType ? ` (${mediaType})` : ""} is not a type this device reads: .docx, .xlsx, .pptx, .pdf, .html, .md, .csv or .txt. Nothing was sent.`
      )
    }
    const size = decodedLength(base64)
    if (size > limits.maxBytes) {
      throw new FileError("file_too_large", `${JSON.stringify(filename)} is about ${size} bytes, over the limit of ${limits.maxBytes} bytes. Nothing was sent.`)
    }
    const bytes = decodeBase64(base64, filename)
    const read = await readFile(bytes, { filename, ...(mediaType === undefined ? {} : { mediaType }), limits })
    files.push({ filename, format: read.format, bytes: bytes.byteLength })
    return read.text
  }

  const replacePart = async (part: unknown): Promise<unknown> => {
    if (!isObject(part)) return part
    if (part.type === "file") {
      const file = isObject(part.file) ? part.file : {}
      if (typeof file.file_data !== "string") {
        throw new FileError(
          typeof file.file_id === "string" ? "file_reference_unsupported" : "file_malformed",
          typeof file.file_id === "string"
            ? "A file part names an uploaded file (file_id); send the file's bytes (file_data) so it can be tokenised on this device. Nothing was sent."
            : "A file part has no file_data. Nothing was sent."
        )
      }
      const { mediaType, base64 } = splitDataUrl(file.file_data)
      const filename = nameFor(typeof file.filename === "string" ? file.filename : undefined, mediaType)
      return fileTextPart(filename, await readBase64(base64, filename, mediaType))
    }
    if (part.type === "document") {
      const source = isObject(part.source) ? part.source : {}
      const title = typeof part.title === "string" && part.title !== "" ? part.title : undefined
      const context = typeof part.context === "string" && part.context !== "" ? `\nContext: ${part.context}` : ""
      const mediaType = typeof source.media_type === "string" ? source.media_type : undefined
      switch (source.type) {
        case "base64": {
          if (typeof source.data !== "string") throw new FileError("file_malformed", "A document block has no base64 data. Nothing was sent.")
          const filename = nameFor(title, mediaType)
          const text = await readBase64(source.data, filename, mediaType)
          return fileTextPart(filename, text + context)
        }
        case "text":
          if (typeof source.data !== "string") throw new FileError("file_malformed", "A text document block has no data. Nothing was sent.")
          return fileTextPart(title ?? "document", source.data + context)
        case "content": {
          const blocks = Array.isArray(source.content) ? source.content : []
          const texts = blocks.map((b) => (isObject(b) && b.type === "text" && typeof b.text === "string" ? b.text : undefined))
          if (texts.some((t) => t === undefined)) {
            throw new FileError("file_unsupported_type", "A document block's content holds something other than text; only text can be tokenised on this device. Nothing was sent.")
          }
          return fileTextPart(title ?? "document", texts.join("\n\n") + context)
        }
        case "url":
        case "file":
          throw new FileError(
            "file_reference_unsupported",
            `A document block refers to a file elsewhere (source type ${source.type}); send its bytes (base64) so it can be tokenised on this device. Nothing was sent.`
          )
        default:
          throw new FileError("file_malformed", "A document block has no readable source. Nothing was sent.")
      }
    }
    return part
  }

  // One file at a time: memory holds one decoded file and its text, however many files the request carries.
  let changed = false
  const messages: Array<unknown> = []
  for (const message of body.messages) {
    if (!isObject(message) || !Array.isArray(message.content) || !message.content.some((p) => isObject(p) && (p.type === "file" || p.type === "document"))) {
      messages.push(message)
      continue
    }
    changed = true
    const content: Array<unknown> = []
    for (const part of message.content) content.push(await replacePart(part))
    messages.push({ ...message, content })
  }
  return changed ? { body: { ...body, messages }, files, fileDataChars } : { body, files, fileDataChars }
}
