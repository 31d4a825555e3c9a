// The image redactor of MEDIA_POLICY=redact: real OCR on the committed fixtures (test/fixtures/images/make.sh), and
// every refusal before or after decoding. The redacted image is read again by the same OCR: no e-mail is left.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createOcr } from "../../../../sdks/typescript/src/ocr/onDeviceOcr.ts"
import { boxesToPaint, createImageRedactor, decodeImage, encodePng, loadCodecs, paintBoxes } from "../../../../sdks/typescript/src/ocr/redactImage.ts"
import { detectStructured } from "../../../../sdks/typescript/src/tokeniser/detectStructured.ts"
import { ImageNotRedactable } from "../../../../sdks/typescript/src/tokeniser/redactImagePart.ts"
import { EgressRefusal, tokeniseRequest } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const FIXTURES = join(import.meta.dirname, "../../../fixtures/images")
const EMAIL_PNG = new Uint8Array(readFileSync(join(FIXTURES, "email.png")))
const EMAIL_JPG = new Uint8Array(readFileSync(join(FIXTURES, "email.jpg")))

const redactor = createImageRedactor({ names: "off" })
const ocr = createOcr({ timeoutMs: 60_000, idleMs: 1_000 })
afterAll(async () => {
  await redactor.close()
  await ocr.close()
})

const reasonOf = async (work: Promise<unknown>): Promise<string> => {
  try {
    await work
  } catch (error) {
    if (error instanceof ImageNotRedactable) return error.reason
    throw error
  }
  throw new Error("not refused")
}

/** A PNG whose header declares `width` x `height` and whose body is `body`. */
const pngHeader = (width: number, height: number, body: Uint8Array = new Uint8Array(16)): Uint8Array => {
  const head = new Uint8Array(33)
  head.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  const view = new DataView(head.buffer)
  view.setUint32(16, width)
  view.setUint32(20, height)
  head.set([8, 6, 0, 0, 0], 24)
  const out = new Uint8Array(head.length + body.length)
  out.set(head)
  out.set(body, head.length)
  return out
}

describe("createImageRedactor", () => {
  it("the original fixture shows the e-mail to the same OCR (the test would otherwise prove nothing)", async () => {
    const text = (await ocr.recognise(EMAIL_PNG)).text
    expect(detectStructured(text).map((s) => s.type)).toContain("EMAIL")
  }, 60_000)

  it("PNG in: the e-mail's box is painted, the line without an identifier stays readable, PNG out", async () => {
    const out = await redactor({ bytes: EMAIL_PNG, mediaType: "image/png" })
    expect(out.mediaType).toBe("image/png")
    const text = (await ocr.recognise(out.bytes)).text
    expect(detectStructured(text)).toEqual([])
    expect(text).not.toMatch(/lovelace|example\.org|@/i)
    expect(text).toContain("Tuesday")
  }, 60_000)

  it("JPEG in: decoded, redacted, re-encoded as PNG", async () => {
    const out = await redactor({ bytes: EMAIL_JPG, mediaType: "image/jpeg" })
    expect(out.mediaType).toBe("image/png")
    const text = (await ocr.recognise(out.bytes)).text
    expect(detectStructured(text)).toEqual([])
    expect(text).toContain("Tuesday")
  }, 60_000)

  it("refuses, before decoding: over the byte limit, not PNG or JPEG, WebP, a pixel bomb, an empty canvas", async () => {
    const small = createImageRedactor({ names: "off", maxBytes: 1000 })
    expect(await reasonOf(small({ bytes: EMAIL_PNG, mediaType: "image/png" }))).toMatch(/over the 1000-byte limit/)
    await small.close()
    expect(await reasonOf(redactor({ bytes: new TextEncoder().encode("<svg></svg>"), mediaType: "image/svg+xml" }))).toMatch(/not a PNG or JPEG/)
    const webp = new Uint8Array(30)
    webp.set(new TextEncoder().encode("RIFF\0\0\0\0WEBPVP8L"))
    expect(await reasonOf(redactor({ bytes: webp, mediaType: "image/webp" }))).toMatch(/WebP/)
    // 100 000 x 100 000 pixels declared by a 49-byte file: refused from the header, never decoded.
    expect(await reasonOf(redactor({ bytes: pngHeader(100_000, 100_000), mediaType: "image/png" }))).toMatch(/100000 x 100000 pixels, over the 20000000-pixel limit/)
    expect(await reasonOf(redactor({ bytes: pngHeader(0, 10), mediaType: "image/png" }))).toMatch(/empty image/)
  })

  it("refuses a damaged image (a valid header over garbage, a truncated JPEG)", async () => {
    expect(await reasonOf(redactor({ bytes: pngHeader(64, 64, new Uint8Array(200).fill(7)), mediaType: "image/png" }))).toMatch(/damaged PNG/)
    expect(await reasonOf(redactor({ bytes: EMAIL_JPG.subarray(0, 400), mediaType: "image/jpeg" }))).toMatch(/damaged JPEG/)
  })

  it("refuses when OCR does not finish in time", async () => {
    const hurried = createImageRedactor({ names: "off", timeoutMs: 1 })
    expect(await reasonOf(hurried({ bytes: EMAIL_PNG, mediaType: "image/png" }))).toMatch(/ocr_timeout/)
    await hurried.close()
  })

  it("through the engine: a refusal is unsupported_content at the image's path, and an image over 20 MiB is refused", async () => {
    const big = new Uint8Array(20 * 1024 * 1024 + 1)
    big.set(EMAIL_PNG)
    const body = {
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: "read this" }, { type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.from(big).toString("base64")}` } }] }]
    }
    const refusal = await tokeniseRequest("chat.completions", body, { names: "off", mediaPolicy: "redact", redactImage: redactor }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(refusal).toBeInstanceOf(EgressRefusal)
    expect(refusal).toMatchObject({ code: "unsupported_content", path: "/messages/0/content/1", kind: "image" })
    expect((refusal as Error).message).toMatch(/^The image at \/messages\/0\/content\/1 is not sent: it is 20971521 bytes, over the 20971520-byte limit/)
  })
})

describe("painting", () => {
  it("every word a detected span overlaps is painted, and words with an @ or six digits even without a detection", async () => {
    const box = (x: number) => ({ x0: x, y0: 0, x1: x + 10, y1: 10 })
    const lines = [
      { words: [{ text: "Mail", box: box(0) }, { text: "ada@example.org", box: box(20) }, { text: "today", box: box(40) }] },
      { words: [{ text: "ref", box: box(60) }, { text: "12-34-56", box: box(80) }, { text: "ada@", box: box(100) }] }
    ]
    const { boxes } = await boxesToPaint(lines, "off")
    expect(boxes.map((b) => b.x0)).toEqual([20, 80, 100])
  })

  it("paints opaque black with padding, clipped to the image, and round-trips through PNG", async () => {
    const codecs = await loadCodecs()
    const pixels = { width: 8, height: 4, data: new Uint8Array(8 * 4 * 4).fill(255) }
    paintBoxes(pixels, [{ x0: 6, y0: 1, x1: 10, y1: 2 }], 1)
    const back = decodeImage(codecs, encodePng(codecs, pixels), "png", 1000)
    const at = (x: number, y: number) => Array.from(back.data.subarray((y * 8 + x) * 4, (y * 8 + x) * 4 + 4))
    expect(at(5, 0)).toEqual([0, 0, 0, 255])
    expect(at(7, 2)).toEqual([0, 0, 0, 255])
    expect(at(4, 1)).toEqual([255, 255, 255, 255])
    expect(at(5, 3)).toEqual([255, 255, 255, 255])
  })
})
