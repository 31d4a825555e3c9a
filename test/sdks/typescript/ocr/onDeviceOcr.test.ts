// The OCR worker's failure paths, with the real tesseract.js engine in this process: a job over its time limit
// stops the worker and the next job starts a fresh one; missing language data is ocr_unavailable (never a
// download); a full queue is ocr_busy; bytes the engine cannot decode are invalid_image. Reading real text is
// proven end to end through the MCP server (test/programs/mcp-ocr.test.ts).
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { createOcr, OcrError } from "../../../../sdks/typescript/src/ocr/onDeviceOcr.ts"

const NOT_AN_IMAGE = new TextEncoder().encode("not an image at all")

const codeOf = (promise: Promise<unknown>) => promise.then(() => "resolved", (error) => (error instanceof OcrError ? error.code : `other: ${error}`))

describe("on-device OCR worker", () => {
  it("a job over its time limit fails with ocr_timeout; the next job gets a fresh, working worker", async () => {
    let timeoutMs = 1
    const ocr = createOcr({ get timeoutMs() { return timeoutMs }, idleMs: 60_000 })
    try {
      expect(await codeOf(ocr.recognise(NOT_AN_IMAGE))).toBe("ocr_timeout")
      timeoutMs = 60_000
      // A worker that answers: it starts and reports the image it cannot decode.
      expect(await codeOf(ocr.recognise(NOT_AN_IMAGE))).toBe("invalid_image")
    } finally {
      await ocr.close()
    }
  }, 120_000)

  it("without the language data it is ocr_unavailable, and nothing is fetched instead", async () => {
    const ocr = createOcr({ timeoutMs: 60_000, idleMs: 60_000, langPath: mkdtempSync(join(tmpdir(), "pr-no-tessdata-")) })
    const failure = await ocr.recognise(NOT_AN_IMAGE).catch((error) => error)
    expect(failure).toBeInstanceOf(OcrError)
    expect(failure.code).toBe("ocr_unavailable")
    expect(failure.message).toContain("nothing is downloaded")
    await ocr.close()
  })

  it("refuses jobs beyond the waiting limit with ocr_busy", async () => {
    const ocr = createOcr({ timeoutMs: 60_000, idleMs: 60_000, maxWaiting: 1 })
    try {
      const first = codeOf(ocr.recognise(NOT_AN_IMAGE))
      expect(await codeOf(ocr.recognise(NOT_AN_IMAGE))).toBe("ocr_busy")
      expect(await first).toBe("invalid_image")
    } finally {
      await ocr.close()
    }
  }, 120_000)
})
