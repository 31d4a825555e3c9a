import { describe, expect, it } from "vitest"
import { imageInfo } from "../../../../sdks/typescript/src/ocr/imageHeader.ts"

const riff = (chunk: string, payload: Array<number>) => {
  const body = Buffer.concat([Buffer.from("WEBP" + chunk, "ascii"), Buffer.from([payload.length, 0, 0, 0]), Buffer.from(payload)])
  const size = Buffer.alloc(4)
  size.writeUInt32LE(body.length)
  return Buffer.concat([Buffer.from("RIFF", "ascii"), size, body])
}

describe("imageInfo: format and pixel size from the header alone", () => {
  it("PNG: IHDR width and height", () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452000007d0000003e80806000000", "hex")
    expect(imageInfo(png)).toEqual({ format: "png", width: 2000, height: 1000 })
  })

  it("JPEG: skips APP segments to the start-of-frame marker", () => {
    const app0 = [0xff, 0xe0, 0x00, 0x10, ...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0]
    const sof2 = [0xff, 0xc2, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    expect(imageInfo(Buffer.from([0xff, 0xd8, ...app0, ...sof2]))).toEqual({ format: "jpeg", width: 800, height: 600 })
    // DHT (C4) is not a frame header.
    expect(imageInfo(Buffer.from([0xff, 0xd8, 0xff, 0xc4, 0x00, 0x04, 0, 0, 0xff, 0xd9, 0, 0, 0, 0, 0]))).toBeUndefined()
  })

  it("WebP: lossy (VP8), lossless (VP8L) and extended (VP8X)", () => {
    const vp8 = [0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01, 0, 0]
    expect(imageInfo(riff("VP8 ", vp8))).toEqual({ format: "webp", width: 640, height: 480 })
    // 14 bits of width - 1, then 14 bits of height - 1: 100 x 50.
    const bits = 99 | (49 << 14)
    expect(imageInfo(riff("VP8L", [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, (bits >>> 24) & 0xff, 0, 0, 0]))).toEqual({ format: "webp", width: 100, height: 50 })
    expect(imageInfo(riff("VP8X", [0, 0, 0, 0, 0x3f, 0x9c, 0x00, 0x0f, 0x27, 0x00]))).toEqual({ format: "webp", width: 40000, height: 10000 })
  })

  it("anything else, or a header cut short, is undefined", () => {
    expect(imageInfo(Buffer.from("GIF89a\x01\x00\x01\x00"))).toBeUndefined()
    expect(imageInfo(Buffer.from("hello world, not an image"))).toBeUndefined()
    expect(imageInfo(Buffer.from("89504e470d0a1a0a0000", "hex"))).toBeUndefined()
    expect(imageInfo(Buffer.from([0xff, 0xd8, 0xff]))).toBeUndefined()
    expect(imageInfo(new Uint8Array(0))).toBeUndefined()
  })
})
