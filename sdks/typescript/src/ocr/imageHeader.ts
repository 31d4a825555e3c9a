/**
 * The format and pixel size of an image, read from its header without decoding it, so an image is refused before
 * OCR when decoding it would take too much memory (a small file can declare a huge canvas). PNG, JPEG and WebP: the
 * formats the on-device OCR reads. `undefined` when the bytes are none of them or the header is cut short.
 */
export type ImageFormat = "png" | "jpeg" | "webp"

export interface ImageInfo {
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

const ascii = (bytes: Uint8Array, at: number, length: number) => String.fromCharCode(...bytes.subarray(at, at + length))

const png = (b: Uint8Array, view: DataView): ImageInfo | undefined => {
  // The first chunk must be IHDR: width and height are its first two big-endian 32-bit fields.
  if (b.length < 24 || ascii(b, 12, 4) !== "IHDR") return undefined
  return { format: "png", width: view.getUint32(16), height: view.getUint32(20) }
}

/** Start-of-frame markers (SOF0-SOF15 except DHT C4, JPG C8 and DAC CC) carry the frame's height and width. */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc

const jpeg = (b: Uint8Array, view: DataView): ImageInfo | undefined => {
  let at = 2
  while (at + 9 <= b.length) {
    if (b[at] !== 0xff) return undefined
    const marker = b[at + 1]!
    if (marker === 0xff) {
      at++
      continue
    }
    // Markers without a length field.
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2
      continue
    }
    if (isStartOfFrame(marker)) return { format: "jpeg", height: view.getUint16(at + 5), width: view.getUint16(at + 7) }
    if (marker === 0xda || marker === 0xd9) return undefined
    at += 2 + view.getUint16(at + 2)
  }
  return undefined
}

const webp = (b: Uint8Array, view: DataView): ImageInfo | undefined => {
  const chunk = ascii(b, 12, 4)
  if (b.length < (chunk === "VP8L" ? 25 : 30)) return undefined
  if (chunk === "VP8 ") return { format: "webp", width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
  if (chunk === "VP8L") {
    const bits = view.getUint32(21, true)
    return { format: "webp", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (chunk === "VP8X") {
    const u24 = (at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)
    return { format: "webp", width: u24(24) + 1, height: u24(27) + 1 }
  }
  return undefined
}

export const imageInfo = (bytes: Uint8Array): ImageInfo | undefined => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length >= 8 && PNG_SIGNATURE.every((v, i) => bytes[i] === v)) return png(bytes, view)
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return jpeg(bytes, view)
  if (bytes.length >= 16 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return webp(bytes, view)
  return undefined
}
