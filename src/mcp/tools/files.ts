/**
 * Files on this device: tokenise_file (text-like formats), tokenise_image (OCR on this device) and reconstruct (a model's
 * answer written back to a file with the originals restored). Office and PDF formats are not read yet; they answer
 * `unsupported_file_type` rather than sending anything half-read.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { basename, extname, resolve } from "node:path"
import { z } from "zod"
import type { SessionContext, ToolDefinition } from "../context.ts"
import { ok, pretty, ToolError } from "../toolResult.ts"
import { imageInfo } from "../ocr/imageHeader.ts"
import { OCR_LANGUAGE, type Ocr, OcrError } from "../ocr/onDeviceOcr.ts"
import { restoreForSession, tokeniseForSession } from "./device.ts"

/** Formats read as UTF-8 text (their markup is kept; values inside it are tokenised like any text). */
const TEXT_EXTENSIONS = new Set([".txt", ".md", ".markdown", ".csv", ".tsv", ".html", ".htm", ".json", ".xml", ".yaml", ".yml", ".log"])

// One object (an MCP input schema is an object at its root); readInput checks that exactly one form is given.
const fileInput = z.strictObject({
  path: z.string().min(1).optional().describe("A file on this device (absolute, or relative to the server's working directory)."),
  filename: z.string().min(1).max(255).optional().describe("With content_base64: the file's name; its extension decides how it is read."),
  content_base64: z.string().optional().describe("With filename: the file's bytes, base64.")
})

type FileInput = z.infer<typeof fileInput>

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** The bytes and name of a file given by path or inline, refused beyond MCP_MAX_FILE_BYTES. */
const readInput = (input: FileInput, session: SessionContext): { filename: string; bytes: Buffer } => {
  const max = session.shared.settings.maxFileBytes
  if (input.path !== undefined) {
    if (input.filename !== undefined || input.content_base64 !== undefined) {
      throw new ToolError("invalid_arguments", "Give either path, or filename with content_base64; not both.")
    }
    const path = resolve(input.path)
    let size: number
    try {
      const stats = statSync(path)
      if (!stats.isFile()) throw new ToolError("file_not_found", `${path} is not a regular file.`)
      size = stats.size
    } catch (error) {
      if (error instanceof ToolError) throw error
      throw new ToolError("file_not_found", `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}).`)
    }
    if (size > max) throw new ToolError("file_too_large", `${basename(path)} is ${size} bytes; the limit is ${max} (MCP_MAX_FILE_BYTES).`)
    return { filename: basename(path), bytes: readFileSync(path) }
  }
  if (input.filename === undefined || input.content_base64 === undefined) {
    throw new ToolError("invalid_arguments", "Give path, or filename with content_base64.")
  }
  const compact = input.content_base64.replace(/\s+/g, "")
  if (!BASE64.test(compact)) throw new ToolError("invalid_arguments", "content_base64 is not base64.")
  if (Math.floor((compact.length * 3) / 4) > max + 2) throw new ToolError("file_too_large", `${input.filename} is over the limit of ${max} bytes (MCP_MAX_FILE_BYTES).`)
  const bytes = Buffer.from(compact, "base64")
  if (bytes.length > max) throw new ToolError("file_too_large", `${input.filename} is ${bytes.length} bytes; the limit is ${max} (MCP_MAX_FILE_BYTES).`)
  return { filename: input.filename, bytes }
}

const tokeniseFile: ToolDefinition<FileInput> = {
  name: "tokenise_file",
  title: "Tokenise a text file on this device",
  description:
    "Reads a text-like file (.txt, .md, .csv, .tsv, .html, .json, .xml, .yaml, .log) on this device and returns its text with personal data replaced by aliases, ready to send to a model. Give `path`, or `filename` with `content_base64`. The aliases are remembered in this session for detokenise and reconstruct.",
  input: fileInput,
  output: z.looseObject({ filename: z.string(), text: z.string(), replaced: z.number(), detectors_fired: z.record(z.string(), z.number()) }),
  run: async (input, session) => {
    const { filename, bytes } = readInput(input, session)
    const extension = extname(filename).toLowerCase()
    if (!TEXT_EXTENSIONS.has(extension)) {
      throw new ToolError("unsupported_file_type", `${extension || "A file without an extension"} is not read yet; supported: ${[...TEXT_EXTENSIONS].join(" ")}.`)
    }
    let text: string
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    } catch {
      throw new ToolError("unsupported_file_type", `${filename} is not UTF-8 text.`)
    }
    const result = await tokeniseForSession(text, session)
    return ok({ filename, text: result.text, replaced: result.replaced, detectors_fired: result.detectorsFired }, result.text)
  }
}

/** What tokenise_image reads: the formats the on-device OCR decodes, checked by content (the name only hints). */
const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".webp"])

const FORMAT_NAMES = "PNG, JPEG or WebP"

/** OCR's own failures as tool errors with the same codes. */
const recogniseOnDevice = async (ocr: Ocr, bytes: Uint8Array) => {
  try {
    return await ocr.recognise(bytes)
  } catch (error) {
    if (error instanceof OcrError) throw new ToolError(error.code, `${error.message} Nothing was sent.`)
    throw error
  }
}

const tokeniseImage: ToolDefinition<FileInput> = {
  name: "tokenise_image",
  title: "Read an image's text on this device and tokenise it",
  description:
    "Reads the text of an image (PNG, JPEG or WebP: a scan, a screenshot, a photo of a document) with OCR on this device (Tesseract, English) and returns that text with personal data replaced by aliases, ready to send to a model. Give `path`, or `filename` with `content_base64`. The image never leaves the device; the aliases are remembered in this session for detokenise and reconstruct. Fails with `ocr_unavailable` when OCR cannot run here, `image_too_large` beyond MCP_OCR_MAX_PIXELS, `ocr_timeout` after MCP_OCR_TIMEOUT_SECONDS.",
  input: fileInput,
  output: z.looseObject({
    filename: z.string(),
    text: z.string(),
    replaced: z.number(),
    detectors_fired: z.record(z.string(), z.number()),
    ocr: z.looseObject({ engine: z.string(), language: z.string(), format: z.string(), width: z.number(), height: z.number(), confidence: z.number(), worker_start_ms: z.number().nullable(), recognise_ms: z.number() })
  }),
  run: async (input, session) => {
    const { filename, bytes } = readInput(input, session)
    const extension = extname(filename).toLowerCase()
    if (extension !== "" && !IMAGE_EXTENSIONS.has(extension)) throw new ToolError("unsupported_file_type", `${extension} is not an image format this tool reads (${FORMAT_NAMES}).`)
    const image = imageInfo(bytes)
    if (image === undefined) throw new ToolError("unsupported_file_type", `${filename} is not a ${FORMAT_NAMES} image (or its header is damaged).`)
    const { maxPixels } = session.shared.settings.ocr
    if (image.width * image.height > maxPixels) {
      throw new ToolError("image_too_large", `${filename} is ${image.width} x ${image.height} pixels; the limit is ${maxPixels} pixels (MCP_OCR_MAX_PIXELS). Nothing was read or sent.`)
    }
    if (image.width === 0 || image.height === 0) throw new ToolError("invalid_image", `${filename} declares an empty image (${image.width} x ${image.height}).`)
    const ocr = session.shared.ocr
    if (ocr === undefined) throw new ToolError("ocr_unavailable", "On-device OCR is turned off (MCP_OCR=off), so the image's text cannot be read here. Nothing was sent. Extract the text another way and use tokenise.")
    const read = await recogniseOnDevice(ocr, bytes)
    const result = await tokeniseForSession(read.text, session)
    const structured = {
      filename,
      text: result.text,
      replaced: result.replaced,
      detectors_fired: result.detectorsFired,
      ocr: { engine: "tesseract.js", language: OCR_LANGUAGE, format: image.format, width: image.width, height: image.height, confidence: read.confidence, worker_start_ms: read.workerStartMs, recognise_ms: read.recogniseMs }
    }
    return ok(structured, result.text)
  }
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The answer as a file of `format`: Markdown and text as they are, HTML as a small standalone document. */
const render = (text: string, format: "md" | "txt" | "html", title: string): string => {
  if (format !== "html") return text
  const paragraphs = text.split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, "<br>")}</p>`).join("\n")
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n<body>\n${paragraphs}\n</body></html>\n`
}

const reconstruct: ToolDefinition<{ text: string; format: "md" | "txt" | "html"; path?: string; filename?: string }> = {
  name: "reconstruct",
  title: "Write a model's answer to a file with the originals restored",
  description:
    "Restores this session's aliases in a model's answer and renders it as a file on this device: Markdown (md), plain text (txt) or HTML (html). With `path`, writes the file there (never overwriting an existing file); otherwise returns its bytes as base64. Fails with `unknown_alias` when the answer holds aliases this session did not create.",
  input: z.strictObject({
    text: z.string().max(1_000_000).describe("The answer, with aliases."),
    format: z.enum(["md", "txt", "html"]).describe("The file format."),
    path: z.string().min(1).optional().describe("Where to write the file on this device; must not exist yet."),
    filename: z.string().min(1).max(255).optional().describe("A name for the document (HTML title); default 'answer'.")
  }),
  output: z.looseObject({ format: z.string(), bytes: z.number(), restored: z.number() }),
  run: async ({ text, format, path, filename }, session) => {
    const restored = restoreForSession(text, session)
    if (restored.unknown.length > 0) {
      throw new ToolError("unknown_alias", `This session holds no original for ${restored.unknown.slice(0, 5).join(", ")}; nothing was written.`)
    }
    const content = Buffer.from(render(restored.text, format, filename ?? "answer"), "utf8")
    if (path !== undefined) {
      const target = resolve(path)
      if (existsSync(target)) throw new ToolError("file_exists", `${target} exists; reconstruct never overwrites a file.`)
      try {
        writeFileSync(target, content, { flag: "wx", mode: 0o600 })
      } catch (error) {
        throw new ToolError("file_write_failed", `${target} cannot be written (${(error as NodeJS.ErrnoException).code ?? "error"}).`)
      }
      const structured = { format, bytes: content.length, restored: restored.restored, path: target }
      return ok(structured, pretty(structured))
    }
    const structured = { format, bytes: content.length, restored: restored.restored, content_base64: content.toString("base64") }
    return ok(structured, restored.text)
  }
}

export const fileTools: ReadonlyArray<ToolDefinition> = [tokeniseFile, tokeniseImage, reconstruct]
