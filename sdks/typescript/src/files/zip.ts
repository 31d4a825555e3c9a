/**
 * Reads entries of a zip package (.docx, .xlsx, .pptx) without trusting it: the central directory is read first,
 * and a package with too many entries, encrypted entries, or entries whose declared sizes add up past the limit is
 * refused before anything is inflated. Inflation then runs in small steps and stops as soon as an entry grows past
 * what it declared, so a package that lies about its sizes costs at most a few megabytes before it is refused.
 */
import { Inflate } from "fflate"
import { FileError } from "./FileError.ts"
import type { FileLimits } from "./limits.ts"

export interface ZipEntry {
  readonly name: string
  readonly method: number
  readonly compressedSize: number
  readonly size: number
  readonly localHeaderOffset: number
  readonly encrypted: boolean
}

export interface ZipPackage {
  readonly entries: ReadonlyMap<string, ZipEntry>
  /** The entry's bytes, or undefined when the package has no such entry. */
  readonly bytes: (name: string) => Uint8Array | undefined
  /** The entry as UTF-8 text, or undefined when the package has no such entry. */
  readonly text: (name: string) => string | undefined
}

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
/** Compressed bytes pushed per inflate step: deflate expands at most ~1,032:1, so one step yields at most ~4 MB. */
const STEP = 4096

const malformed = (why: string) => new FileError("file_malformed", `The file is not a readable zip package: ${why}.`)

export const isZip = (bytes: Uint8Array): boolean =>
  bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04

export const openZip = (bytes: Uint8Array, limits: FileLimits): ZipPackage => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let eocd = -1
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
    if (view.getUint32(i, true) === EOCD) {
      eocd = i
      break
    }
  }
  if (eocd < 0) throw malformed("no end of central directory")
  const count = view.getUint16(eocd + 10, true)
  const directoryOffset = view.getUint32(eocd + 16, true)
  if (count === 0xffff || directoryOffset === 0xffffffff) throw malformed("ZIP64 packages are not supported")
  if (count > limits.maxEntries) {
    throw new FileError("file_zip_bomb", `The package lists ${count} entries, more than the limit of ${limits.maxEntries}; it was not opened.`)
  }
  const entries = new Map<string, ZipEntry>()
  let at = directoryOffset
  const decoder = new TextDecoder()
  for (let n = 0; n < count; n++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL) throw malformed("a broken central directory")
    const flags = view.getUint16(at + 8, true)
    const nameLength = view.getUint16(at + 28, true)
    const extraLength = view.getUint16(at + 30, true)
    const commentLength = view.getUint16(at + 32, true)
    const name = decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength))
    entries.set(name, {
      name,
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      localHeaderOffset: view.getUint32(at + 42, true),
      encrypted: (flags & 1) === 1
    })
    at += 46 + nameLength + extraLength + commentLength
  }
  let expanded = 0

  const bytesOf = (name: string): Uint8Array | undefined => {
    const entry = entries.get(name)
    if (entry === undefined) return undefined
    if (entry.encrypted) throw new FileError("file_encrypted", "The package is encrypted (password-protected); it cannot be read on this device.")
    expanded += entry.size
    if (expanded > limits.maxExpandedBytes) {
      throw new FileError("file_zip_bomb", `The package would expand to more than ${limits.maxExpandedBytes} bytes; it was not read.`)
    }
    const local = entry.localHeaderOffset
    if (local + 30 > bytes.length || view.getUint32(local, true) !== LOCAL) throw malformed(`a broken entry header (${name})`)
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
    const data = bytes.subarray(start, start + entry.compressedSize)
    if (data.length !== entry.compressedSize) throw malformed(`a truncated entry (${name})`)
    if (entry.method === 0) {
      if (entry.size !== entry.compressedSize) throw malformed(`a stored entry with two sizes (${name})`)
      return data
    }
    if (entry.method !== 8) throw malformed(`an entry compressed with method ${entry.method} (${name})`)
    const out = new Uint8Array(entry.size)
    let written = 0
    const inflate = new Inflate((chunk) => {
      if (written + chunk.length > entry.size) {
        throw new FileError("file_zip_bomb", `An entry of the package (${name}) expands past the size it declares; it was not read.`)
      }
      out.set(chunk, written)
      written += chunk.length
    })
    try {
      for (let i = 0; i < data.length; i += STEP) inflate.push(data.subarray(i, Math.min(data.length, i + STEP)), i + STEP >= data.length)
      if (data.length === 0) inflate.push(new Uint8Array(0), true)
    } catch (error) {
      if (error instanceof FileError) throw error
      throw malformed(`an entry that does not inflate (${name})`)
    }
    if (written !== entry.size) throw malformed(`an entry shorter than it declares (${name})`)
    return out
  }

  return {
    entries,
    bytes: bytesOf,
    text: (name) => {
      const data = bytesOf(name)
      return data === undefined ? undefined : decoder.decode(data)
    }
  }
}

/** The target of a relationship, as an entry name: relative to the folder of `from`, or absolute from the root. */
export const resolvePart = (from: string, target: string): string => {
  if (target.startsWith("/")) return target.slice(1)
  const parts = from.split("/").slice(0, -1)
  for (const piece of target.split("/")) {
    if (piece === "..") parts.pop()
    else if (piece !== ".") parts.push(piece)
  }
  return parts.join("/")
}

/** The relationships file of an entry: word/document.xml -> word/_rels/document.xml.rels. */
export const relsOf = (part: string): string => {
  const slash = part.lastIndexOf("/")
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`
}
