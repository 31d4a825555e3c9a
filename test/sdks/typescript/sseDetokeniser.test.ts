// Frame-by-frame restoration of originals in streamed answers: an alias cut at any position across frames is
// restored whole, nothing but a proper alias prefix is held back, JSON text (tool arguments) gets escaped originals,
// and a torn or non-JSON frame is a StreamError.
import { describe, expect, it } from "vitest"
import { StreamError } from "../../../sdks/typescript/src/errors.ts"
import { createSseDetokeniser, serialiseEvent } from "../../../sdks/typescript/src/sseDetokeniser.ts"

const map = new Map([
  ["<EMAIL_1_ab23>", "jane@example.com"],
  ["<PERSON_1_cd45>", 'Ann "the" O\'Neil']
])
const chunkFrame = (content: string) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`
const finishFrame = `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`

const contentOf = (events: ReadonlyArray<{ json: unknown }>) =>
  events.map((e) => (e.json as any)?.choices?.[0]?.delta?.content ?? "").join("")

describe("SSE detokeniser", () => {
  const text = "Mail <EMAIL_1_ab23> now, <PERSON_1_cd45>!"
  for (let cut = 1; cut < text.length; cut++) {
    it(`restores aliases when a frame boundary falls at ${cut}`, () => {
      const sse = createSseDetokeniser("chat.completions", map)
      const first = sse.push(chunkFrame(text.slice(0, cut)))
      // What is shown after the first frame never contains part of an alias.
      expect(contentOf(first)).not.toMatch(/<[A-Z_0-9a-z]*$/)
      const rest = [...sse.push(chunkFrame(text.slice(cut))), ...sse.push(finishFrame), ...sse.push("data: [DONE]\n\n"), ...sse.end()]
      expect(contentOf([...first, ...rest])).toBe(`Mail jane@example.com now, Ann "the" O'Neil!`)
      expect(sse.completed()).toBe(true)
    })
  }

  it("releases text held back at [DONE] in a chunk before it, and passes the receipt trailer on", () => {
    const sse = createSseDetokeniser("chat.completions", map)
    const events = [...sse.push(chunkFrame("see <EMAIL_1_")), ...sse.push("data: [DONE]\n\nevent: receipt-v2\ndata: {\"v\":2}\n\n"), ...sse.end()]
    expect(contentOf(events)).toBe("see <EMAIL_1_")
    expect(events.at(-2)!.data).toBe("[DONE]")
    expect(sse.receipt()).toEqual({ v: 2 })
    expect(serialiseEvent(events.at(-1)!)).toBe('event: receipt-v2\ndata: {"v":2}\n\n')
  })

  it("escapes originals inside streamed JSON (tool call arguments, Anthropic input_json_delta)", () => {
    const sse = createSseDetokeniser("messages", map)
    const delta = (partial: string) => `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: partial } })}\n\n`
    const events = [
      ...sse.push(delta('{"name": "<PERSON_1')),
      ...sse.push(delta('_cd45>"}')),
      ...sse.push(`event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n`),
      ...sse.push(`event: message_stop\ndata: {"type":"message_stop"}\n\n`)
    ]
    const json = events.map((e) => (e.json as any)?.delta?.partial_json ?? "").join("")
    expect(JSON.parse(json)).toEqual({ name: `Ann "the" O'Neil` })
    expect(sse.completed()).toBe(true)
  })

  it("a frame that is not JSON, or a stream ending inside a frame, is a StreamError", () => {
    expect(() => createSseDetokeniser("chat.completions", map).push("data: {not json\n\n")).toThrow(StreamError)
    const torn = createSseDetokeniser("chat.completions", map)
    torn.push('data: {"id":"c1","choi')
    expect(() => torn.end()).toThrow(StreamError)
  })
})
