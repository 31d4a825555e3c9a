/**
 * Documents on this device: tokenise_file (a document read with the SDK's file readers, its text tokenised) and
 * reconstruct (a model's answer written back to a file with the originals restored).
 */
import { existsSync, writeFileSync } from "node:fs"
import { extname } from "node:path"
import { z } from "zod"
import type { FileStructure } from "../../files/types.ts"
import type { ToolDefinition } from "../context.ts"
import { ok, pretty, ToolError } from "../toolResult.ts"
import { restoreForSession, tokeniseForSession } from "./device.ts"
import { type FileInput, fileInput, readInput, toolPath } from "./fileInput.ts"
import { tokeniseImage } from "./image.ts"

/** Text formats the readers have no extension for, read as plain text (markup kept; values in it tokenised). */
const PLAIN_TEXT_EXTENSIONS = new Set([".tsv", ".json", ".xml", ".yaml", ".yml", ".log"])

/**
 * What the result says of the document's structure: counts only. Headings and sheet names are the document's own
 * text, untokenised, and a tool result goes to the model.
 */
const structureSummary = (structure: FileStructure) => ({
  headings: structure.headings.length,
  tables: structure.tables,
  list_items: structure.listItems,
  parts: [...structure.parts],
  ...(structure.sheets === undefined ? {} : { sheets: structure.sheets.length }),
  ...(structure.slides === undefined ? {} : { slides: structure.slides }),
  ...(structure.pages === undefined ? {} : { pages: structure.pages })
})

const tokeniseFileInput = fileInput.extend({
  anchors: z.boolean().optional().describe("Prefix each paragraph (.docx, .pptx) and cell (.xlsx) with its anchor (⟦document/12⟧, ⟦Sheet1!B2⟧), so an answer can name what to change for reconstruct's round trip. Default false.")
})

const tokeniseFile: ToolDefinition<FileInput & { anchors?: boolean }> = {
  name: "tokenise_file",
  title: "Tokenise a document on this device",
  description:
    "Reads a document on this device (.docx, .xlsx, .pptx, .pdf text, .html, .md, .csv, .txt; also .tsv, .json, .xml, .yaml, .log as plain text) into markdown text (headings, lists, tables, sheets, slides and notes, headers, footers, comments) and returns it with personal data replaced by aliases, ready to send to a model. Give `path`, or `filename` with `content_base64`. The aliases are remembered in this session for detokenise and reconstruct. Refuses encrypted, malformed or oversized files (nothing is sent).",
  input: tokeniseFileInput,
  output: z.looseObject({
    filename: z.string(),
    format: z.string(),
    text: z.string(),
    replaced: z.number(),
    detectors_fired: z.record(z.string(), z.number()),
    structure: z.looseObject({ headings: z.number(), tables: z.number(), list_items: z.number(), parts: z.array(z.string()) })
  }),
  run: async (input, session) => {
    const { filename, bytes } = readInput(input, session)
    const plain = PLAIN_TEXT_EXTENSIONS.has(extname(filename).toLowerCase())
    // Loaded on first use: each reader loads its own library (zip, XML, PDF) only for a file of its type.
    const { readFile } = await import("../../files/readFile.ts")
    const read = await readFile(bytes, {
      filename,
      ...(plain ? { mediaType: "text/plain" } : {}),
      anchors: input.anchors ?? false,
      limits: { maxBytes: session.shared.settings.maxFileBytes }
    })
    const result = await tokeniseForSession(read.text, session)
    const structured = { filename, format: read.format, text: result.text, replaced: result.replaced, detectors_fired: result.detectorsFired, structure: structureSummary(read.structure) }
    return ok(structured, result.text)
  }
}

type OutputFormat = "docx" | "xlsx" | "html" | "md" | "txt"

const MEDIA_TYPES: Readonly<Record<OutputFormat, string>> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  html: "text/html",
  md: "text/markdown",
  txt: "text/plain"
}

interface ReconstructInput {
  readonly text: string
  readonly format: OutputFormat
  readonly path?: string
  readonly filename?: string
  readonly original_path?: string
  readonly original_base64?: string
}

/** The original of a round trip, by path or inline, under the same size limit as any file the tools read. */
const readOriginal = (input: ReconstructInput, session: Parameters<typeof readInput>[1]): Uint8Array | undefined => {
  if (input.original_path !== undefined && input.original_base64 !== undefined) {
    throw new ToolError("invalid_arguments", "Give original_path or original_base64, not both.")
  }
  if (input.original_path !== undefined) return readInput({ path: input.original_path }, session).bytes
  if (input.original_base64 !== undefined) return readInput({ filename: `original.${input.format}`, content_base64: input.original_base64 }, session).bytes
  return undefined
}

/** Writes `content` to `path` on this device, never over an existing file. */
const writeNew = (path: string, content: Uint8Array): string => {
  const target = toolPath(path)
  if (existsSync(target)) throw new ToolError("file_exists", `${target} exists; reconstruct never overwrites a file.`)
  try {
    writeFileSync(target, content, { flag: "wx", mode: 0o600 })
  } catch (error) {
    throw new ToolError("file_write_failed", `${target} cannot be written (${(error as NodeJS.ErrnoException).code ?? "error"}).`)
  }
  return target
}

const reconstruct: ToolDefinition<ReconstructInput> = {
  name: "reconstruct",
  title: "Write a model's answer to a file with the originals restored",
  description:
    "Restores this session's aliases in a model's answer and writes it as a file on this device: a Word document (docx: headings, lists, tables, bold/italic), a workbook (xlsx: markdown tables, `## Sheet: name` starts a sheet), a web page (html), Markdown (md) or plain text (txt). Round trip: give the original .docx or .xlsx (`original_path` or `original_base64`) and an answer whose lines start with the anchors tokenise_file showed with `anchors: true` (`⟦document/12⟧ new text`, `⟦Sheet1!B2⟧ new value`): the original comes back with only those paragraphs or cells changed. With `path`, writes the file there (never overwriting); otherwise returns its bytes as base64. Fails with `unknown_alias` when the answer holds aliases this session did not create.",
  input: z.strictObject({
    text: z.string().max(1_000_000).describe("The answer, with aliases."),
    format: z.enum(["docx", "xlsx", "html", "md", "txt"]).describe("The file format."),
    path: z.string().min(1).optional().describe("Where to write the file on this device; must not exist yet."),
    filename: z.string().min(1).max(255).optional().describe("The document's name (the title of html and docx); default 'answer'."),
    original_path: z.string().min(1).optional().describe("Round trip: the original .docx or .xlsx on this device."),
    original_base64: z.string().optional().describe("Round trip: the original .docx or .xlsx, base64.")
  }),
  output: z.looseObject({ format: z.string(), media_type: z.string(), bytes: z.number(), restored: z.number(), round_trip: z.boolean() }),
  run: async (input, session) => {
    const restored = restoreForSession(input.text, session)
    if (restored.unknown.length > 0) {
      throw new ToolError("unknown_alias", `This session holds no original for ${restored.unknown.slice(0, 5).join(", ")}; nothing was written.`)
    }
    const original = readOriginal(input, session)
    if (original !== undefined && input.format !== "docx" && input.format !== "xlsx") {
      throw new ToolError("file_unsupported_type", `A round trip writes back a .docx or .xlsx, not .${input.format}.`)
    }
    let content: Uint8Array
    if (input.format === "txt") content = new TextEncoder().encode(restored.text)
    else {
      // The SDK's writers, loaded on first use; the text is already restored from this session's aliases.
      const { reconstruct: writeFile } = await import("../../files/reconstruct.ts")
      content = await writeFile(restored.text, {
        format: input.format,
        filename: input.filename ?? "answer",
        ...(original === undefined ? {} : { original }),
        limits: { maxBytes: session.shared.settings.maxFileBytes }
      })
    }
    const meta = { format: input.format, media_type: MEDIA_TYPES[input.format], bytes: content.byteLength, restored: restored.restored, round_trip: original !== undefined }
    if (input.path !== undefined) {
      const structured = { ...meta, path: writeNew(input.path, content) }
      return ok(structured, pretty(structured))
    }
    const structured = { ...meta, content_base64: Buffer.from(content).toString("base64") }
    const textual = input.format === "md" || input.format === "txt" || input.format === "html"
    return ok(structured, textual ? new TextDecoder().decode(content) : pretty(meta))
  }
}

export const fileTools: ReadonlyArray<ToolDefinition> = [tokeniseFile, tokeniseImage, reconstruct]
