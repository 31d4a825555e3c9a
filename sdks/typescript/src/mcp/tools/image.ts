/**
 * tokenise_image: an image's text read by OCR on this device, then tokenised like any text. The image is checked
 * (format by content, pixel count from its header) before the OCR worker decodes it, and never leaves the device.
 */
import { extname } from "node:path"
import { z } from "zod"
import type { ToolDefinition } from "../context.ts"
import { imageInfo } from "../../ocr/imageHeader.ts"
import { OCR_LANGUAGE, type Ocr, OcrError } from "../../ocr/onDeviceOcr.ts"
import { ok, ToolError } from "../toolResult.ts"
import { tokeniseForSession } from "./device.ts"
import { type FileInput, fileInput, readInput } from "./fileInput.ts"

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

export const tokeniseImage: ToolDefinition<FileInput> = {
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
    if (extension !== "" && !IMAGE_EXTENSIONS.has(extension)) throw new ToolError("file_unsupported_type", `${extension} is not an image format this tool reads (${FORMAT_NAMES}).`)
    const image = imageInfo(bytes)
    if (image === undefined) throw new ToolError("file_unsupported_type", `${filename} is not a ${FORMAT_NAMES} image (or its header is damaged).`)
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

