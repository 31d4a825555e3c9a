/**
 * On-device OCR: tesseract.js (Tesseract compiled to WebAssembly, run in a worker thread) with the English language
 * data of the @tesseract.js-data/eng package, read from its installed files. Nothing is downloaded: the language
 * data path is a local directory, the WebAssembly core and the worker script come from node_modules, and the
 * language data is not cached anywhere else.
 *
 * One worker per process, started on first use (its start-up cost is reported with the first result), reused, and
 * stopped after `idleMs` unused so an idle server does not keep its memory. Jobs run one at a time; at most
 * `maxWaiting` wait, the rest are refused (`ocr_busy`). Each job, worker start included, must finish within
 * `timeoutMs`, or the worker is stopped (freeing its memory) and the job fails with `ocr_timeout`; the next job
 * starts a fresh worker.
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { Worker as TesseractWorker } from "tesseract.js"

export type OcrErrorCode = "ocr_unavailable" | "ocr_timeout" | "ocr_busy" | "invalid_image"

export class OcrError extends Error {
  readonly code: OcrErrorCode
  constructor(code: OcrErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

export interface OcrOptions {
  readonly timeoutMs: number
  readonly idleMs: number
  readonly maxWaiting?: number
  /** A directory holding `eng.traineddata.gz` (default: the installed @tesseract.js-data/eng package's). */
  readonly langPath?: string
  /** The setting a timed-out job's message names (default MCP_OCR_TIMEOUT_SECONDS, the MCP server's). */
  readonly timeoutSetting?: string
}

/** A box in pixels: left, top (inclusive) and right, bottom (exclusive), as Tesseract reports them. */
export interface OcrBox {
  readonly x0: number
  readonly y0: number
  readonly x1: number
  readonly y1: number
}

export interface OcrWord {
  readonly text: string
  readonly box: OcrBox
}

/** One line of recognised text, as its words in reading order. */
export interface OcrLine {
  readonly words: ReadonlyArray<OcrWord>
}

export interface OcrResult {
  readonly text: string
  /** Tesseract's mean word confidence, 0-100. */
  readonly confidence: number
  /** How long starting the worker took, when this job started it; null when it was already running. */
  readonly workerStartMs: number | null
  readonly recogniseMs: number
  /** The lines with each word's box, when asked for (`{ words: true }`); empty otherwise. */
  readonly lines: ReadonlyArray<OcrLine>
}

export interface RecogniseOptions {
  /** Also return every word with its box (the image redactor's input). */
  readonly words?: boolean
}

export interface Ocr {
  readonly recognise: (image: Uint8Array, options?: RecogniseOptions) => Promise<OcrResult>
  readonly close: () => Promise<void>
}

export const OCR_LANGUAGE = "eng"

/** The LSTM model (integer-quantised, 2.9 MB) of the language-data package; the engine runs LSTM only. */
const defaultLangPath = (): string | undefined => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int")
  } catch {
    return undefined
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const createOcr = (options: OcrOptions): Ocr => {
  const maxWaiting = options.maxWaiting ?? 4
  let worker: Promise<TesseractWorker> | undefined
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  let tail: Promise<unknown> = Promise.resolve()
  let waiting = 0

  const stop = async () => {
    const current = worker
    worker = undefined
    if (current !== undefined) await current.then((w) => w.terminate()).catch(() => {})
  }

  /** Starts a worker; `forget` runs if its thread dies on its own (the next job then starts another). */
  const start = async (forget: () => void): Promise<TesseractWorker> => {
    const langPath = options.langPath ?? defaultLangPath()
    if (langPath === undefined || !existsSync(join(langPath, `${OCR_LANGUAGE}.traineddata.gz`))) {
      throw new OcrError("ocr_unavailable", `The OCR language data (${OCR_LANGUAGE}.traineddata.gz of @tesseract.js-data/eng) is not installed here (npm install @tesseract.js-data/eng); nothing is downloaded to replace it.`)
    }
    let tesseract: typeof import("tesseract.js")
    try {
      const module: any = await import("tesseract.js")
      tesseract = module.createWorker === undefined ? module.default : module
    } catch (error) {
      throw new OcrError("ocr_unavailable", `The OCR engine (tesseract.js) cannot be loaded (npm install tesseract.js): ${message(error)}`)
    }
    try {
      const created = await tesseract.createWorker(OCR_LANGUAGE, tesseract.OEM.LSTM_ONLY, {
        langPath,
        gzip: true,
        // "none": the language data is read from langPath each start and never written elsewhere (no cache file).
        cacheMethod: "none",
        // Without a handler tesseract.js throws a failed job's error from its message listener, outside any caller.
        errorHandler: () => {}
      })
      // An idle worker thread must not keep the process alive; a thread that dies takes the worker with it.
      const thread = (created as unknown as { worker?: { unref?: () => void; on?: (event: string, f: (...args: Array<unknown>) => void) => void } }).worker
      thread?.unref?.()
      thread?.on?.("error", forget)
      thread?.on?.("exit", forget)
      return created
    } catch (error) {
      throw new OcrError("ocr_unavailable", `The OCR engine could not start: ${message(error)}`)
    }
  }

  const launch = (): Promise<TesseractWorker> => {
    const launched: Promise<TesseractWorker> = start(() => {
      if (worker === launched) worker = undefined
    })
    worker = launched
    launched.catch(() => {
      if (worker === launched) worker = undefined
    })
    return launched
  }

  const run = async (image: Uint8Array, words: boolean): Promise<OcrResult> => {
    let workerStartMs: number | null = null
    let current = worker
    if (current === undefined) {
      const t0 = performance.now()
      current = launch()
      await current
      workerStartMs = Math.round(performance.now() - t0)
    }
    const live = await current
    // A job stopped by its time limit may still get here: its worker is being terminated, and tesseract.js would
    // fail the job outside any caller (an unhandled rejection), so it is not given the job.
    if (worker !== current) throw new OcrError("ocr_timeout", "The OCR worker was stopped before this image was read.")
    const t1 = performance.now()
    let result
    try {
      result = await live.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength), {}, words ? { text: true, blocks: true } : { text: true })
    } catch (error) {
      throw new OcrError("invalid_image", `The image could not be read: ${message(error).replace(/^Error: /, "")}`)
    }
    const lines: Array<OcrLine> = []
    if (words) {
      for (const block of result.data.blocks ?? []) {
        for (const paragraph of block.paragraphs) {
          for (const line of paragraph.lines) {
            lines.push({ words: line.words.map((w) => ({ text: w.text, box: { x0: w.bbox.x0, y0: w.bbox.y0, x1: w.bbox.x1, y1: w.bbox.y1 } })) })
          }
        }
      }
    }
    return { text: result.data.text, confidence: Math.round(result.data.confidence), workerStartMs, recogniseMs: Math.round(performance.now() - t1), lines }
  }

  const withTimeout = (image: Uint8Array, words: boolean): Promise<OcrResult> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        void stop()
        reject(new OcrError("ocr_timeout", `OCR took longer than ${options.timeoutMs} ms and was stopped (${options.timeoutSetting ?? "MCP_OCR_TIMEOUT_SECONDS"}); try a smaller or clearer image.`))
      }, options.timeoutMs)
      run(image, words).then(resolve, reject).finally(() => clearTimeout(timer))
    })

  return {
    recognise: (image, recogniseOptions) => {
      if (waiting >= maxWaiting) return Promise.reject(new OcrError("ocr_busy", `${waiting} images are already waiting for OCR; try again shortly.`))
      waiting++
      const job = tail.then(() => {
        waiting--
        if (idleTimer !== undefined) clearTimeout(idleTimer)
        return withTimeout(image, recogniseOptions?.words === true)
      })
      tail = job.catch(() => {}).then(() => {
        idleTimer = setTimeout(() => void stop(), options.idleMs)
        idleTimer.unref()
      })
      return job
    },
    close: async () => {
      if (idleTimer !== undefined) clearTimeout(idleTimer)
      await stop()
    }
  }
}
