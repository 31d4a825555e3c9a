// tokenise_image with the official MCP client over stdio: text rendered into an image (a Chromium screenshot) is
// read by OCR on the device, and its e-mail address and name are aliased and restorable in the session. The server
// runs with every network connection denied (test/support/denyNetwork.cjs, in its worker threads too), so the OCR
// engine and its language data provably come from the installed packages: nothing is downloaded, nothing leaves.
// Bad images are refused with stable codes before any decoding, and the server stays up.
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { crc32 } from "node:zlib"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, renderTextPng } from "../support/chromium.ts"
import { callFails, callOk, stdioMcpClient } from "../support/mcpServer.ts"

const EMAIL = "jane.doe@example.com"
const NAME = "Jane Doe"
const dir = mkdtempSync(join(tmpdir(), "pr-mcp-ocr-"))
const NETWORK_LOG = join(dir, "network.log")
let mcp: Client
let png: Buffer
/** What the client could not parse on the server's stdout (the OCR engine must print nothing there). */
const protocolErrors: Array<Error> = []

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

/** A PNG whose header declares `width` x `height` pixels, followed by no real image data (a decompression bomb's shape). */
const pngDeclaring = (width: number, height: number) => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data])
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", Buffer.alloc(64, 0x55)), chunk("IEND", Buffer.alloc(0))])
}

const networkAttempts = () => (existsSync(NETWORK_LOG) ? readFileSync(NETWORK_LOG, "utf8") : "")

beforeAll(async () => {
  const browser = await launchChromium()
  try {
    png = await renderTextPng(browser, [`Contact ${NAME}`, EMAIL])
  } finally {
    await browser.close()
  }
  const keyFile = join(dir, "key")
  writeFileSync(keyFile, `svc_${"a".repeat(32)}`)
  chmodSync(keyFile, 0o600)
  mcp = await stdioMcpClient({
    // Only for the last test, which shows the guard is live: a gateway tool must try to connect here and fail.
    GATEWAY_URL: "http://127.0.0.1:2",
    GATEWAY_KEY_FILE: keyFile,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${resolve("test/support/denyNetwork.cjs")}`.trim(),
    DENY_NETWORK_LOG: NETWORK_LOG,
    NAME_MODEL: "builtin",
    PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
    MCP_RECEIPTS_FILE: join(dir, "receipts.jsonl"),
    MCP_MAX_FILE_BYTES: "100000",
    MCP_OCR_MAX_PIXELS: "4000000"
  })
  mcp.onerror = (error) => protocolErrors.push(error)
}, 120_000)
afterAll(async () => {
  await mcp?.close()
})

describe("MCP tokenise_image: OCR on the device", () => {
  it("reads the e-mail address and the name in a PNG, aliases both, restores them in the session; no connection was attempted", async () => {
    const read = await callOk(mcp, "tokenise_image", { filename: "card.png", content_base64: b64(png) })
    expect(read.text).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    expect(read.text).toMatch(/<PERSON_1_[0-9a-z]+>/)
    expect(read.text).not.toContain(EMAIL)
    expect(read.text).not.toContain("Jane")
    expect(read.detectors_fired).toMatchObject({ EMAIL: 1, PERSON: 1 })
    expect(read.ocr).toMatchObject({ engine: "tesseract.js", language: "eng", format: "png", width: 720 })
    expect(read.ocr.confidence).toBeGreaterThan(50)
    // The first image started the OCR worker, and says what that cost.
    expect(read.ocr.worker_start_ms).toBeGreaterThan(0)
    expect(read.ocr.recognise_ms).toBeGreaterThan(0)
    const restored = await callOk(mcp, "detokenise", { text: read.text })
    expect(restored.text).toContain(EMAIL)
    expect(restored.text).toContain(`Contact ${NAME}`)

    const path = join(dir, "card.png")
    writeFileSync(path, png)
    const again = await callOk(mcp, "tokenise_image", { path })
    expect(again.ocr.worker_start_ms).toBeNull()
    expect(again.text).toMatch(/<EMAIL_1_[0-9a-z]+>/)

    expect(networkAttempts()).toBe("")
    // The language data is read from the installed package and cached nowhere (tesseract.js would write it to the
    // working directory by default).
    expect(existsSync("eng.traineddata")).toBe(false)
  })

  it("refuses bad images with stable codes before decoding them, and stays up", async () => {
    const bomb = await callFails(mcp, "tokenise_image", { filename: "bomb.png", content_base64: b64(pngDeclaring(50_000, 50_000)) }, "image_too_large")
    expect(bomb).toContain("50000 x 50000")
    await callFails(mcp, "tokenise_image", { filename: "wide.png", content_base64: b64(pngDeclaring(4000, 1001)) }, "image_too_large")
    await callFails(mcp, "tokenise_image", { filename: "broken.png", content_base64: b64(pngDeclaring(200, 100)) }, "invalid_image")
    await callFails(mcp, "tokenise_image", { filename: "notes.png", content_base64: b64(Buffer.from(`Mail ${EMAIL}`)) }, "file_unsupported_type")
    await callFails(mcp, "tokenise_image", { filename: "scan.gif", content_base64: b64(Buffer.from("GIF89a")) }, "file_unsupported_type")
    await callFails(mcp, "tokenise_image", { filename: "scan.txt", content_base64: "AAAA" }, "file_unsupported_type")
    await callFails(mcp, "tokenise_image", { filename: "big.png", content_base64: b64(Buffer.concat([png, Buffer.alloc(100_000)])) }, "file_too_large")
    await callFails(mcp, "tokenise_image", { path: join(dir, "absent.png") }, "file_not_found")
    await callFails(mcp, "tokenise_image", { path: 7 }, "invalid_arguments")
    // The worker survived the broken image.
    expect((await callOk(mcp, "tokenise_image", { filename: "card.png", content_base64: b64(png) })).detectors_fired.EMAIL).toBe(1)
    expect(networkAttempts()).toBe("")
    expect(protocolErrors).toEqual([])
  })

  it("the network guard is live in that server: a gateway tool's connection attempt is recorded and fails", async () => {
    await callFails(mcp, "get_balance", {}, "gateway_identity_failed")
    expect(networkAttempts()).toMatch(/^main connect \{"host":"127\.0\.0\.1","port":"?2"?\}$/m)
  })

  it("with MCP_OCR=off answers ocr_unavailable and reads nothing", async () => {
    const off = await stdioMcpClient({ MCP_OCR: "off", NAME_MODEL: "off", PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"), MCP_RECEIPTS_FILE: join(dir, "receipts-off.jsonl") })
    try {
      const text = await callFails(off, "tokenise_image", { filename: "card.png", content_base64: b64(png) }, "ocr_unavailable")
      expect(text).toContain("Nothing was sent")
    } finally {
      await off.close()
    }
  })
})
