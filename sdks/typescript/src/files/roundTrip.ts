/**
 * The round trip: the ORIGINAL .docx or .xlsx written back with only the edited paragraphs' text runs or cells
 * changed. Every other entry of the package, and every byte of an edited part outside the edited text, is kept:
 * styles, numbering, tables, images, formulas, comments' authors. An edited paragraph's text goes into its first
 * text run (keeping that run's formatting); its other runs are emptied. An edited cell becomes an inline string (or
 * a number, when it was a number and still is); a formula cell keeps its formula.
 */
import { strToU8, zipSync, type Zippable } from "fflate"
import { escapeXmlText } from "./anchors.ts"
import { FileError } from "./FileError.ts"
import type { FileLimits } from "./limits.ts"
import { docxTextParts, partKey } from "./readDocx.ts"
import { splitCellRef, workbookSheets } from "./readXlsx.ts"
import { splice, xmlTags } from "./xmlTags.ts"
import { openZip, type ZipPackage } from "./zip.ts"

const unknownAnchor = (anchor: string, what: string) =>
  new FileError("file_anchor_unknown", `The edit ⟦${anchor}⟧ names no ${what} of the original file; nothing was written.`)

/** All entries of the package, in their order, with `replaced` ones swapped in; compressed again. */
const repack = (zip: ZipPackage, replaced: ReadonlyMap<string, string>): Uint8Array => {
  const files: Zippable = {}
  for (const name of zip.entries.keys()) {
    if (name.endsWith("/")) continue
    const text = replaced.get(name)
    files[name] = text === undefined ? zip.bytes(name)! : strToU8(text)
  }
  return zipSync(files, { level: 6 })
}

const preserve = (text: string) => `<w:t xml:space="preserve">${escapeXmlText(text)}</w:t>`

/** Paragraph index -> new text, applied to one WordprocessingML part (paragraphs counted as the reader counts them). */
const editParagraphs = (xml: string, edits: ReadonlyMap<number, string>, part: string): string => {
  const changes: Array<{ start: number; end: number; value: string }> = []
  const open: Array<{ index: number; texts: Array<{ start: number; end: number }>; textOpen: number | undefined }> = []
  const seen = new Set<number>()
  let count = 0
  for (const tag of xmlTags(xml)) {
    if (tag.name === "w:p") {
      if (tag.closing) {
        const p = open.pop()
        if (p === undefined) continue
        const text = edits.get(p.index)
        if (text === undefined) continue
        seen.add(p.index)
        if (p.texts.length === 0) changes.push({ start: tag.start, end: tag.start, value: `<w:r>${preserve(text)}</w:r>` })
        p.texts.forEach((t, i) => changes.push({ start: t.start, end: t.end, value: i === 0 ? preserve(text) : "<w:t/>" }))
      } else if (tag.selfClosing) {
        const index = count++
        const text = edits.get(index)
        if (text !== undefined) {
          seen.add(index)
          changes.push({ start: tag.start, end: tag.end, value: `${xml.slice(tag.start, tag.end - 2).trimEnd()}><w:r>${preserve(text)}</w:r></w:p>` })
        }
      } else open.push({ index: count++, texts: [], textOpen: undefined })
    } else if (tag.name === "w:t" && open.length > 0) {
      const p = open.at(-1)!
      if (tag.selfClosing) p.texts.push({ start: tag.start, end: tag.end })
      else if (!tag.closing) p.textOpen = tag.start
      else if (p.textOpen !== undefined) {
        p.texts.push({ start: p.textOpen, end: tag.end })
        p.textOpen = undefined
      }
    }
  }
  for (const index of edits.keys()) if (!seen.has(index)) throw unknownAnchor(`${partKey(part)}/${index}`, "paragraph")
  return splice(xml, changes)
}

export const roundTripDocx = (original: Uint8Array, edits: ReadonlyMap<string, string>, limits: FileLimits): Uint8Array => {
  const zip = openZip(original, limits)
  if (!zip.entries.has("word/document.xml")) throw new FileError("file_malformed", "The original is not a Word document (it has no word/document.xml).")
  const parts = new Map(docxTextParts(zip).map((p) => [partKey(p), p]))
  const byPart = new Map<string, Map<number, string>>()
  for (const [anchor, text] of edits) {
    const m = /^([\w.-]+)\/(\d+)$/.exec(anchor)
    const part = m === null ? undefined : parts.get(m[1]!)
    if (m === null || part === undefined) throw unknownAnchor(anchor, "paragraph")
    let map = byPart.get(part)
    if (map === undefined) byPart.set(part, (map = new Map()))
    map.set(Number(m[2]), text)
  }
  const replaced = new Map<string, string>()
  for (const [part, map] of byPart) replaced.set(part, editParagraphs(zip.text(part)!, map, part))
  return repack(zip, replaced)
}

const attribute = (tagText: string, name: string): string | undefined => new RegExp(`\\s${name}="([^"]*)"`).exec(tagText)?.[1]

/** Cell reference -> new text, applied to one worksheet part. */
const editCells = (xml: string, edits: ReadonlyMap<string, string>, sheet: string): string => {
  const changes: Array<{ start: number; end: number; value: string }> = []
  const seen = new Set<string>()
  let cell: { start: number; ref: string; openTag: string } | undefined
  let hasFormula = false
  const write = (ref: string, openTag: string, start: number, end: number) => {
    const text = edits.get(ref)
    if (text === undefined) return
    seen.add(ref)
    if (hasFormula) return
    const style = attribute(openTag, "s")
    const wasNumber = (attribute(openTag, "t") ?? "n") === "n"
    const head = `<c r="${ref}"${style === undefined ? "" : ` s="${style}"`}`
    changes.push({
      start,
      end,
      value: wasNumber && /^-?\d+(\.\d+)?(E[+-]?\d+)?$/i.test(text)
        ? `${head}><v>${text}</v></c>`
        : text === ""
        ? `${head}/>`
        : `${head} t="inlineStr"><is><t xml:space="preserve">${escapeXmlText(text)}</t></is></c>`
    })
  }
  for (const tag of xmlTags(xml)) {
    if (tag.name === "c") {
      const tagText = xml.slice(tag.start, tag.end)
      if (tag.selfClosing) {
        hasFormula = false
        const ref = attribute(tagText, "r")
        if (ref !== undefined) write(ref.toUpperCase(), tagText, tag.start, tag.end)
      } else if (!tag.closing) {
        hasFormula = false
        const ref = attribute(tagText, "r")
        cell = ref === undefined ? undefined : { start: tag.start, ref: ref.toUpperCase(), openTag: tagText }
      } else if (cell !== undefined) {
        write(cell.ref, cell.openTag, cell.start, tag.end)
        cell = undefined
      }
    } else if (tag.name === "f" && cell !== undefined && !tag.closing) hasFormula = true
  }
  for (const ref of edits.keys()) if (!seen.has(ref)) throw unknownAnchor(`${sheet}!${ref}`, "existing cell")
  return splice(xml, changes)
}

/**
 * Edits by `Sheet!A1` applied to the original workbook. Formulas are recalculated when the file is next opened
 * (their cached values may depend on edited cells).
 */
export const roundTripXlsx = (original: Uint8Array, edits: ReadonlyMap<string, string>, limits: FileLimits): Uint8Array => {
  const zip = openZip(original, limits)
  const sheets = workbookSheets(zip)
  const bySheet = new Map<string, Map<string, string>>()
  for (const [anchor, text] of edits) {
    const bang = anchor.lastIndexOf("!")
    const name = anchor.slice(0, bang).replace(/^'(.*)'$/, "$1")
    const ref = anchor.slice(bang + 1).toUpperCase()
    const sheet = sheets.find((s) => s.name === name)
    if (bang < 0 || sheet === undefined || splitCellRef(ref) === undefined) throw unknownAnchor(anchor, "cell")
    let map = bySheet.get(sheet.part)
    if (map === undefined) bySheet.set(sheet.part, (map = new Map()))
    map.set(ref, text)
  }
  const replaced = new Map<string, string>()
  for (const [part, map] of bySheet) replaced.set(part, editCells(zip.text(part)!, map, sheets.find((s) => s.part === part)!.name))
  if (replaced.size > 0) {
    const workbook = zip.text("xl/workbook.xml")!
    if (/<calcPr\b/.test(workbook) && !/fullCalcOnLoad=/.test(workbook)) replaced.set("xl/workbook.xml", workbook.replace(/<calcPr\b/, '<calcPr fullCalcOnLoad="1"'))
  }
  return repack(zip, replaced)
}
