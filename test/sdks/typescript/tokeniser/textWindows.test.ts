import { describe, expect, it } from "vitest"
import {
  builtinNameModel,
  createSession,
  detectSpans,
  resolveOverlaps,
  type NameModel,
  type Span
} from "../../../../sdks/typescript/src/tokeniser/index.ts"
import { detectNamesWithCompromise } from "../../../../sdks/typescript/src/tokeniser/compromiseNames.ts"
import { mergeWindowSpans, scanInWindows, textWindows } from "../../../../sdks/typescript/src/tokeniser/textWindows.ts"

/** A stand-in name finder: every "Ada Lovelace" is a PERSON. */
const adaSpans = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  for (let i = text.indexOf("Ada Lovelace"); i !== -1; i = text.indexOf("Ada Lovelace", i + 1)) {
    spans.push({ start: i, end: i + 12, type: "PERSON" })
  }
  return spans
}

const values = (text: string, spans: ReadonlyArray<Span>) => spans.map((s) => [s.type, text.slice(s.start, s.end), s.start])

describe("textWindows", () => {
  it("own ranges cover the text exactly once and views add context on both sides", () => {
    const text = "word ".repeat(400)
    const windows = textWindows(text, { size: 100, overlap: 20 })
    expect(windows.length).toBeGreaterThan(15)
    expect(windows[0]!.ownStart).toBe(0)
    expect(windows.at(-1)!.ownEnd).toBe(text.length)
    for (let i = 1; i < windows.length; i++) expect(windows[i]!.ownStart).toBe(windows[i - 1]!.ownEnd)
    for (const w of windows.slice(1, -1)) {
      expect(w.ownEnd - w.ownStart).toBeLessThanOrEqual(100)
      expect(w.viewStart).toBeLessThan(w.ownStart)
      expect(w.ownStart - w.viewStart).toBeLessThanOrEqual(20)
      expect(w.viewEnd).toBeGreaterThan(w.ownEnd)
      expect(w.viewEnd - w.ownEnd).toBeLessThanOrEqual(20)
    }
  })

  it("cuts after a line break first, else after a sentence end, else at a space", () => {
    const lines = textWindows(`${"a".repeat(70)}\n${"b. c ".repeat(20)}`, { size: 100, overlap: 0 })
    expect(lines[0]!.ownEnd).toBe(71)
    const sentences = textWindows(`${"word ".repeat(12)}Done. ${"word ".repeat(30)}`, { size: 100, overlap: 0 })
    expect(sentences[0]!.ownEnd).toBe(66)
    const spaces = textWindows("word ".repeat(40), { size: 98, overlap: 0 })
    expect(spaces[0]!.ownEnd).toBe(95)
  })

  it("a text without spaces is cut anyway, never between the halves of a surrogate pair", () => {
    const text = "😀".repeat(200)
    const windows = textWindows(text, { size: 101, overlap: 10 })
    for (const w of windows) {
      expect(w.ownStart % 2).toBe(0)
      expect(w.ownEnd % 2).toBe(0)
    }
    expect(windows.at(-1)!.ownEnd).toBe(text.length)
  })

  it("a short text is one window", () => {
    expect(textWindows("hello", { size: 100 })).toEqual([{ viewStart: 0, viewEnd: 5, ownStart: 0, ownEnd: 5 }])
    expect(textWindows("")).toEqual([])
  })
})

describe("mergeWindowSpans", () => {
  it("resolves only groups of overlapping spans and keeps the others as they are", () => {
    const spans: Array<Span> = [
      { start: 0, end: 5, type: "PERSON" },
      { start: 3, end: 12, type: "PERSON" },
      { start: 20, end: 30, type: "EMAIL" },
      { start: 40, end: 45, type: "PERSON" },
      { start: 40, end: 45, type: "PERSON" }
    ]
    expect(mergeWindowSpans(spans, resolveOverlaps)).toEqual([
      { start: 3, end: 12, type: "PERSON" },
      { start: 20, end: 30, type: "EMAIL" },
      { start: 40, end: 45, type: "PERSON" }
    ])
  })
})

describe("scanInWindows (how the built-in name model reads long texts)", () => {
  const filler = (n: number) => "lorem ipsum dolor sit amet ".repeat(n)

  it("a name straddling a window cut is found once, with its exact offsets (compromise)", async () => {
    // No line break or sentence end anywhere: the cut falls on a space inside the name.
    const before = filler(3).trimEnd()
    const text = `${before} and then Ada Lovelace wrote the notes ${filler(3)}`
    const at = text.indexOf("Ada Lovelace")
    const windows = textWindows(text, { size: at + 6, overlap: 40 })
    expect(windows[0]!.ownEnd).toBeGreaterThan(at)
    expect(windows[0]!.ownEnd).toBeLessThan(at + 12)
    const spans = await scanInWindows(text, detectNamesWithCompromise, { windows: { size: at + 6, overlap: 40 } })
    expect(values(text, spans)).toEqual([["PERSON", "Ada Lovelace", at]])
  })

  it("gives the same spans window by window as on the whole text, at every cut position", async () => {
    const text = `${filler(2)}Ada Lovelace mailed ada@example.com and Ada Lovelace again ${filler(2)}Ada Lovelace`
    const whole = await adaSpans(text)
    expect(whole).toHaveLength(3)
    for (let size = 8; size <= 60; size += 3) {
      const windowed = await scanInWindows(text, adaSpans, { windows: { size, overlap: 30 } })
      expect(values(text, windowed)).toEqual(values(text, whole))
    }
  })

  it("repeated text: a window already scanned is not scanned again", async () => {
    const calls: Array<string> = []
    const text = "Ada Lovelace wrote the notes.\n".repeat(2000)
    const spans = await scanInWindows(text, (view) => (calls.push(view), adaSpans(view)), { windows: { size: 300, overlap: 30 } })
    expect(spans).toHaveLength(2000)
    expect(new Set(spans.map((s) => s.start)).size).toBe(2000)
    expect(textWindows(text, { size: 300, overlap: 30 }).length).toBeGreaterThanOrEqual(200)
    expect(calls.length).toBeLessThanOrEqual(3)
  })

  it("stops between windows once its signal is aborted, rejecting with the signal's reason", async () => {
    const calls: Array<string> = []
    const controller = new AbortController()
    const stopping = (view: string) => {
      calls.push(view)
      if (calls.length === 3) controller.abort(new Error("client went away"))
      return []
    }
    const text = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(" ")
    await expect(scanInWindows(text, stopping, { signal: controller.signal, windows: { size: 100, overlap: 10 } })).rejects.toThrow(
      "client went away"
    )
    expect(calls).toHaveLength(3)
  })

  it("lets the event loop run while it works through a long text", async () => {
    const busy = () => {
      const until = performance.now() + 5
      while (performance.now() < until) {
        // a scan that computes for 5 ms per window
      }
      return []
    }
    let ticks = 0
    const timer = setInterval(() => ticks++, 1)
    try {
      // Different words throughout, so that no window repeats an earlier one.
      const text = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(" ")
      await scanInWindows(text, busy, { windows: { size: 200, overlap: 20 } })
    } finally {
      clearInterval(timer)
    }
    // ~65 windows of 5 ms: a loop blocked throughout would have run the timer once at most.
    expect(ticks).toBeGreaterThan(3)
  })

  it("the built-in name model reads a name column's header far above the value (rules see the whole text)", async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `Zorblat Quenchwick${i % 2 === 0 ? "" : "e"}\tcity${i}`)
    const text = `name\tcity\n${rows.join("\n")}`
    expect(text.length).toBeGreaterThan(8 * 8192)
    const spans = await builtinNameModel.detect(text)
    const lastRow = text.lastIndexOf("Zorblat")
    expect(spans.some((s) => s.start === lastRow)).toBe(true)
  })

  it("the built-in name model stops on its signal too", async () => {
    const controller = new AbortController()
    controller.abort(new Error("gone"))
    await expect(builtinNameModel.detect("Ada Lovelace wrote.", { signal: controller.signal })).rejects.toThrow("gone")
  })
})

describe("detectSpans", () => {
  it("a table header is a cue for values far below it, past the first window", async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `row${i}\t${String(250577909 + i * 7).padStart(9, "0")}`)
    const text = `name\tssn\n${rows.join("\n")}`
    expect(text.length).toBeGreaterThan(8 * 8192)
    const spans = await detectSpans(text, createSession({ names: "off" }))
    const last = rows.at(-1)!.split("\t")[1]!
    expect(spans.filter((s) => s.type === "US_SSN").map((s) => text.slice(s.start, s.end))).toContain(last)
  })

  it("an abort is not reported as a name model failure, even when the model rejects because of it", async () => {
    const controller = new AbortController()
    const model: NameModel = {
      detect: async (_text, options) => {
        controller.abort(new Error("budget spent"))
        options?.signal?.throwIfAborted()
        return []
      }
    }
    await expect(detectSpans("Ada", createSession({ names: model }), { signal: controller.signal })).rejects.toThrow(
      "budget spent"
    )
  })
})
