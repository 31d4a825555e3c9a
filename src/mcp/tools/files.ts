/**
 * Documents on this device: tokenise_file (a document read with the SDK's file readers, its text tokenised) and
 * reconstruct (a model's answer written back to a file with the originals restored).
 */
import { existsSync, writeFileSync } from "node:fs"
import { extname, resolve } from "node:path"
import { z } from "zod"
import type { FileStructure } from "../../../sdks/typescript/src/files/types.ts"
import type { ToolDefinition } from "../context.ts"
import { ok, pretty, ToolError } from "../toolResult.ts"
import { restoreForSession, tokeniseForSession } from "./device.ts"
import { type FileInput, fileInput, readInput } from "./fileInput.ts"
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

const tokeniseFile: ToolDefinition<FileInput> = {
  name: "tokenise_file",
  title: "Tokenise a document on this device",
  description:
    "Reads a document on this device (.docx, .xlsx, .pptx, .pdf text, .html, .md, .csv, .txt; also .tsv, .json, .xml, .yaml, .log as plain text) into markdown text (headings, lists, tables, sheets, slides and notes, headers, footers, comments) and returns it with personal data replaced by aliases, ready to send to a model. Give `path`, or `filename` with `content_base64`. The aliases are remembered in this session for detokenise and reconstruct. Refuses encrypted, malformed or oversized files (nothing is sent).",
  input: fileInput,
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
    const { readFile } = await import("../../../sdks/typescript/src/files/readFile.ts")
    const read = await readFile(bytes, {
      filename,
      ...(plain ? { mediaType: "text/plain" } : {}),
      limits: { maxBytes: session.shared.settings.maxFileBytes }
    })
    const result = await tokeniseForSession(read.text, session)
    const structured = { filename, format: read.format, text: result.text, replaced: result.replaced, detectors_fired: result.detectorsFired, structure: structureSummary(read.structure) }
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
