/**
 * The image redactor of MEDIA_POLICY=redact (Node only): on-device OCR (onDeviceOcr.ts, tesseract.js with the
 * installed English data, nothing downloaded) reads every word of the image with its box; the structured detectors
 * and the name model run over the recognised lines; every word a detected identifier covers is painted solid black;
 * the image is re-encoded as PNG (lossless, so the paint stays solid; metadata such as EXIF is not carried over).
 *
 * Decoding is pure JavaScript: PNG with pngjs, JPEG with jpeg-js. Refused before any decoding (ImageNotRedactable,
 * which the engine turns into `unsupported_content` at the image's path, nothing sent): more than `maxBytes`, a
 * header that is not PNG or JPEG or is damaged, more than `maxPixels` pixels (a small file can declare a huge canvas);
 * then a body that does not decode, and OCR that does not finish within `timeoutMs`.
 *
 * What it cannot see: faces, signatures, handwriting, and text the OCR misses (tiny, rotated, low-contrast, stylised,
 * or not English-script). Words holding an `@` or six or more digits are painted even when no detector matches them
 * (a half-read e-mail address or account number).
 */
import { detectStructured } from "../tokeniser/detectStructured.ts"
import type { NameModel } from "../tokeniser/NameModel.ts"
import { ImageNotRedactable } from "../tokeniser/redactImagePart.ts"
import type { ImageRedactor } from "../tokeniser/tokeniseRequest.ts"
import type { Span } from "../tokeniser/types.ts"
import { imageInfo } from "./imageHeader.ts"
import { createOcr, type OcrBox, type OcrLine, OcrError } from "./onDeviceOcr.ts"

export const REDACT_MAX_BYTES = 20 * 1024 * 1024
export const REDACT_MAX_PIXELS = 20_000_000
export const REDACT_OCR_TIMEOUT_MS = 30_000

export interface ImageRedactorOptions {
  /** Larger images are refused (default 20 MiB). */
  readonly maxBytes?: number
  /** Images of more pixels are refused before they are decoded (default 20 million). */
  readonly maxPixels?: number
  /** OCR of one image, worker start included, must finish within this (default 30 s). */
  readonly timeoutMs?: number
  /** The OCR worker stops after this long unused (default 60 s). */
  readonly idleMs?: number
  /** Names in the image: a name model, or "off" (default: the built-in on-device model). */
  readonly names?: NameModel | "off"
  /** Pixels of margin painted around each word's box (default 2). */
  readonly padding?: number
  /** The setting a timeout's message names (default "the image redaction time limit"). */
  readonly timeoutSetting?: string
}

/** An ImageRedactor that also stops its OCR worker. */
export interface NodeImageRedactor extends ImageRedactor {
  readonly close: () => Promise<void>
}

export interface Pixels {
  readonly width: number
  readonly height: number
  /** RGBA, 4 bytes a pixel, rows top to bottom. */
  readonly data: Uint8Array
}

type PngModule = typeof import("pngjs")
type JpegModule = typeof import("jpeg-js")
export interface Codecs {
  readonly png: PngModule
  readonly jpeg: JpegModule
}
let loaded: Promise<Codecs> | undefined
/** pngjs and jpeg-js (CommonJS), loaded on the first image: an application that never redacts never loads them. */
export const loadCodecs = (): Promise<Codecs> =>
  (loaded ??= Promise.all([import("pngjs"), import("jpeg-js")]).then(([png, jpeg]) => ({
    png: ((png as { default?: PngModule }).default ?? png) as PngModule,
    jpeg: ((jpeg as { default?: JpegModule }).default ?? jpeg) as JpegModule
  })))

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export const decodeImage = (codecs: Codecs, bytes: Uint8Array, format: "png" | "jpeg", maxPixels: number): Pixels => {
  try {
    if (format === "png") {
      const image = codecs.png.PNG.sync.read(asBuffer(bytes))
      return { width: image.width, height: image.height, data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength) }
    }
    const image = codecs.jpeg.decode(bytes, {
      useTArray: true,
      formatAsRGBA: true,
      maxResolutionInMP: Math.ceil(maxPixels / 1_000_000),
      maxMemoryUsageInMB: Math.ceil((maxPixels * 4) / 1_000_000) + 64
    })
    return { width: image.width, height: image.height, data: image.data }
  } catch {
    throw new ImageNotRedactable(`it is a damaged ${format.toUpperCase()} image (it does not decode)`)
  }
}

export const encodePng = (codecs: Codecs, pixels: Pixels): Uint8Array => {
  const { PNG } = codecs.png
  const out = PNG.sync.write(Object.assign(new PNG({ width: pixels.width, height: pixels.height }), { data: asBuffer(pixels.data) }), { colorType: 6 })
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
}

/** Paints each box (plus `padding` pixels around it, clipped to the image) opaque black, in place. */
export const paintBoxes = (pixels: Pixels, boxes: ReadonlyArray<OcrBox>, padding: number): void => {
  for (const box of boxes) {
    const x0 = Math.max(0, Math.floor(box.x0) - padding)
    const y0 = Math.max(0, Math.floor(box.y0) - padding)
    const x1 = Math.min(pixels.width, Math.ceil(box.x1) + padding)
    const y1 = Math.min(pixels.height, Math.ceil(box.y1) + padding)
    for (let y = y0; y < y1; y++) {
      const row = y * pixels.width * 4
      for (let x = x0; x < x1; x++) {
        const at = row + x * 4
        pixels.data[at] = 0
        pixels.data[at + 1] = 0
        pixels.data[at + 2] = 0
        pixels.data[at + 3] = 255
      }
    }
  }
}

/** A word that looks like part of an identifier even when no detector matched it (OCR may split an address). */
const SUSPICIOUS_WORD = /@|(?:\d\D?){6}/

/**
 * The boxes to paint: the recognised lines become one text (words joined by spaces, lines by newlines), the
 * detectors and the name model run over it, and every word a detected span overlaps is painted, with every
 * suspicious word (an `@`, six or more digits).
 */
export const boxesToPaint = async (lines: ReadonlyArray<OcrLine>, names: NameModel | "off", signal?: AbortSignal): Promise<{ boxes: Array<OcrBox>; detected: number }> => {
  const words: Array<{ start: number; end: number; text: string; box: OcrBox }> = []
  let text = ""
  for (const line of lines) {
    if (text !== "") text += "\n"
    line.words.forEach((word, i) => {
      if (i > 0) text += " "
      words.push({ start: text.length, end: text.length + word.text.length, text: word.text, box: word.box })
      text += word.text
    })
  }
  const spans: Array<Span> = detectStructured(text)
  if (names !== "off" && text.trim() !== "") spans.push(...(await names.detect(text, signal === undefined ? {} : { signal })))
  const boxes = words.filter((w) => SUSPICIOUS_WORD.test(w.text) || spans.some((s) => s.start < w.end && s.end > w.start)).map((w) => w.box)
  return { boxes, detected: spans.length }
}

const loadBuiltinNames = async (): Promise<NameModel> => (await import("../tokeniser/builtinNameModel.ts")).builtinNameModel

/**
 * A Node image redactor for RelayClient's `redactImage` (with `mediaPolicy: "redact"`) and the local proxy. Its OCR
 * worker starts on the first image and stops when idle; `close()` stops it at once.
 */
export const createImageRedactor = (options: ImageRedactorOptions = {}): NodeImageRedactor => {
  const maxBytes = options.maxBytes ?? REDACT_MAX_BYTES
  const maxPixels = options.maxPixels ?? REDACT_MAX_PIXELS
  const padding = options.padding ?? 2
  const ocr = createOcr({
    timeoutMs: options.timeoutMs ?? REDACT_OCR_TIMEOUT_MS,
    idleMs: options.idleMs ?? 60_000,
    timeoutSetting: options.timeoutSetting ?? "the image redaction time limit"
  })
  let names: Promise<NameModel | "off"> | undefined

  const redact = async (image: { readonly bytes: Uint8Array; readonly mediaType: string }, signal?: AbortSignal) => {
    signal?.throwIfAborted()
    if (image.bytes.byteLength > maxBytes) {
      throw new ImageNotRedactable(`it is ${image.bytes.byteLength} bytes, over the ${maxBytes}-byte limit of image redaction`)
    }
    const info = imageInfo(image.bytes)
    if (info === undefined) throw new ImageNotRedactable("it is not a PNG or JPEG image, or its header is damaged")
    if (info.format === "webp") throw new ImageNotRedactable("WebP images cannot be redacted (PNG and JPEG can)")
    if (info.width === 0 || info.height === 0) throw new ImageNotRedactable(`it declares an empty image (${info.width} x ${info.height})`)
    if (info.width * info.height > maxPixels) {
      throw new ImageNotRedactable(`it is ${info.width} x ${info.height} pixels, over the ${maxPixels}-pixel limit of image redaction`)
    }
    const codecs = await loadCodecs()
    const pixels = decodeImage(codecs, image.bytes, info.format, maxPixels)
    if (pixels.width !== info.width || pixels.height !== info.height) throw new ImageNotRedactable("its header and its pixels disagree on its size")
    // OCR reads the pixels decoded here (a JPEG re-encoded as PNG first), so the boxes are in the same pixels painted
    // (a JPEG's EXIF orientation, for one, is not applied by either).
    const readable = info.format === "png" ? image.bytes : encodePng(codecs, pixels)
    let lines: ReadonlyArray<OcrLine>
    try {
      const recognised = await abortable(ocr.recognise(readable, { words: true }), signal)
      lines = recognised.lines
    } catch (error) {
      if (signal?.aborted === true) throw error
      if (error instanceof OcrError) {
        throw new ImageNotRedactable(error.code === "invalid_image" ? "the OCR could not read it" : `on-device OCR failed (${error.code}): ${error.message}`)
      }
      throw error
    }
    const model = await (names ??= options.names === undefined ? loadBuiltinNames() : Promise.resolve(options.names))
    const { boxes } = await boxesToPaint(lines, model, signal)
    paintBoxes(pixels, boxes, padding)
    return { bytes: encodePng(codecs, pixels), mediaType: "image/png" }
  }
  return Object.assign(redact, { close: () => ocr.close() })
}

const abortable = <A>(work: Promise<A>, signal: AbortSignal | undefined): Promise<A> => {
  if (signal === undefined) return work
  return new Promise<A>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort))
  })
}
