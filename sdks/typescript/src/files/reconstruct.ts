/**
 * `reconstruct(text, { format, filename, aliases, original })`: a model's answer rebuilt into a file on this device,
 * with the originals restored from the call's aliases (the alias map never leaves the device).
 *
 * - `md`: the answer as markdown; `html`: a standalone page; `docx`: a new Word document (headings, lists, tables);
 *   `xlsx`: a new workbook from JSON sheets or markdown tables (`## Sheet: name` headings start sheets).
 * - Round trip: with `original` (the .docx or .xlsx the answer is about), the original file comes back with only
 *   the edited paragraphs or cells changed. The answer names them with anchors: `⟦document/12⟧ new text` for
 *   paragraphs (readFile with `anchors: true` shows them), `⟦Sheet1!B2⟧ new value` for cells; or, for a workbook,
 *   sheets given back as readFile shows them (`## Sheet: name`, row numbers and column letters), diffed cell by cell.
 */
import { detokenise } from "../tokeniser/detokenise.ts"
import { parseAnchorEdits } from "./anchors.ts"
import { FileError } from "./FileError.ts"
import { fileLimits, type FileLimits } from "./limits.ts"

export type ReconstructFormat = "docx" | "xlsx" | "html" | "md"

export interface ReconstructOptions {
  readonly format: ReconstructFormat
  /** The file's name: the document title of .html and .docx (default "document"). */
  readonly filename?: string
  /** The call's aliases (alias -> original), e.g. a relay answer's `aliases`; without them the text is kept as is. */
  readonly aliases?: ReadonlyMap<string, string> | Readonly<Record<string, string>>
  /** The original .docx or .xlsx: write it back with the answer's anchored edits (round trip). */
  readonly original?: Uint8Array
  /** Size limits for reading `original` (default: as readFile). */
  readonly limits?: Partial<FileLimits>
}

const FORMATS: ReadonlyArray<ReconstructFormat> = ["docx", "xlsx", "html", "md"]

export const reconstruct = async (text: string, options: ReconstructOptions): Promise<Uint8Array> => {
  if (!FORMATS.includes(options.format)) {
    throw new FileError("file_unsupported_type", `reconstruct writes .docx, .xlsx, .html or .md, not ${JSON.stringify(options.format)}.`)
  }
  if (typeof text !== "string") throw new FileError("file_malformed", "reconstruct needs the answer as text.")
  const aliases = options.aliases === undefined ? new Map<string, string>() : options.aliases instanceof Map ? options.aliases : new Map(Object.entries(options.aliases))
  const restored = detokenise(text, aliases as ReadonlyMap<string, string>)
  const title = (options.filename ?? "document").replace(/\.[^.]*$/, "")
  if (options.original !== undefined) {
    const limits = fileLimits(options.limits)
    if (options.original.byteLength > limits.maxBytes) {
      throw new FileError("file_too_large", `The original is ${options.original.byteLength} bytes, over the limit of ${limits.maxBytes} bytes.`)
    }
    const roundTrip = await import("./roundTrip.ts")
    const { isZip } = await import("./zip.ts")
    if (!isZip(options.original)) throw new FileError("file_malformed", `The original is not a .${options.format} package.`)
    if (options.format === "docx") return roundTrip.roundTripDocx(options.original, parseAnchorEdits(restored), limits)
    if (options.format === "xlsx") return roundTrip.roundTripXlsx(options.original, parseAnchorEdits(restored), restored, limits)
    throw new FileError("file_unsupported_type", `A round trip writes back a .docx or .xlsx, not .${options.format}.`)
  }
  switch (options.format) {
    case "md":
      return new TextEncoder().encode(restored)
    case "html":
      return (await import("./writeHtml.ts")).writeHtml(restored, title)
    case "docx":
      return (await import("./writeDocx.ts")).writeDocx(restored, title)
    case "xlsx":
      return (await import("./writeXlsx.ts")).writeXlsx(restored)
  }
}
