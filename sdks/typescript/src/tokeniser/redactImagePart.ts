import { EgressRefusal } from "../wire/egressPolicy.ts"
import type { ImageRedactor } from "./tokeniseRequest.ts"

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,(.*)$/is

/** A plain loop: Uint8Array.from with a mapping function goes through the iterator, 10x slower on a 20 MB image. */
const fromBase64 = (base64: string): Uint8Array => {
  const binary = atob(base64.replace(/\s+/g, ""))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

const toBase64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/**
 * Thrown by an image redactor for an image it will not redact (corrupt, too large, a format it cannot decode, OCR
 * that timed out): `reason` completes "The image at <path> is not sent: ...". It carries no image content.
 */
export class ImageNotRedactable extends Error {
  readonly _tag = "ImageNotRedactable"
  readonly reason: string
  constructor(reason: string) {
    super(`the image is not sent: ${reason}`)
    this.name = "ImageNotRedactable"
    this.reason = reason
  }
}

const cannotRedact = (path: string, why: string) =>
  new EgressRefusal("unsupported_content", path, `The image at ${path} is not sent: ${why}, so it cannot be redacted on the device. Nothing was sent.`, "image")

/** Redacts a `data:image/...;base64,` URL, or refuses anything else (a remote URL or a provider file id). */
const redactDataUrl = async (url: unknown, path: string, redact: ImageRedactor, signal?: AbortSignal): Promise<string> => {
  const match = typeof url === "string" ? DATA_URL.exec(url) : null
  if (match === null) throw cannotRedact(path, "it is not inline image data (a remote URL or a stored file)")
  let bytes: Uint8Array
  try {
    bytes = fromBase64(match[2]!)
  } catch {
    throw cannotRedact(path, "its base64 data is malformed")
  }
  let out: Awaited<ReturnType<ImageRedactor>>
  try {
    out = await redact({ bytes, mediaType: match[1]!.toLowerCase() }, signal)
  } catch (error) {
    if (error instanceof ImageNotRedactable) throw cannotRedact(path, error.reason)
    if (signal?.aborted === true || error instanceof EgressRefusal) throw error
    // Any other failure of the redactor: refused (fail-closed); its message is not repeated (it could quote content).
    throw cannotRedact(path, "the image redactor failed")
  }
  return `data:${out.mediaType};base64,${toBase64(out.bytes)}`
}

/**
 * One image part with its identifiers painted over (MEDIA_POLICY=redact), in the shape it came in: an OpenAI
 * `image_url` part, a Responses `input_image` part, or an Anthropic image `source`. Only inline data can be redacted:
 * the device never fetches a remote image, and a provider-side file is out of its reach (both refused).
 */
export const redactImagePart = async (part: unknown, path: string, redact: ImageRedactor, signal?: AbortSignal): Promise<unknown> => {
  if (!isObject(part)) throw cannotRedact(path, "it is not an image part")
  if (part.type === "image_url" && isObject(part.image_url)) {
    return { ...part, image_url: { ...part.image_url, url: await redactDataUrl(part.image_url.url, path, redact, signal) } }
  }
  if (part.type === "input_image") {
    if (part.file_id !== undefined && part.file_id !== null) throw cannotRedact(path, "it is a stored file")
    return { ...part, image_url: await redactDataUrl(part.image_url, path, redact, signal) }
  }
  if (part.type === "base64" && typeof part.data === "string" && typeof part.media_type === "string") {
    const url = await redactDataUrl(`data:${part.media_type};base64,${part.data}`, path, redact, signal)
    const [, mediaType, data] = DATA_URL.exec(url)!
    return { ...part, media_type: mediaType, data }
  }
  throw cannotRedact(path, "it is not inline image data (a remote URL or a stored file)")
}
