// bench/lib/responsesStreamDetokenise.ts: the stream it measures is the Responses API's event sequence, and the
// measurement refuses to report a stream that was not restored.
import { describe, expect, it } from "vitest"
import { measureResponsesStreamDetokenise, responsesStreamFrames } from "../../../bench/lib/responsesStreamDetokenise.ts"

const typeOf = (frame: string) => /^event: (.*)$/m.exec(frame)?.[1]

describe("responsesStreamFrames", () => {
  it("frames a reply as OpenAI streams it: created ... one delta per piece ... completed with the whole output", () => {
    const frames = responsesStreamFrames("Echo: <EMAIL_1_ab>", 4)
    expect(frames.map(typeOf)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(5).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed"
    ])
    const deltas = frames.filter((f) => typeOf(f) === "response.output_text.delta").map((f) => JSON.parse(f.split("\ndata: ")[1]!).delta)
    expect(deltas.join("")).toBe("Echo: <EMAIL_1_ab>")
    const numbers = frames.map((f) => JSON.parse(f.split("\ndata: ")[1]!).sequence_number)
    expect(numbers).toEqual(frames.map((_, i) => i))
  })
})

describe("measureResponsesStreamDetokenise", () => {
  it("measures a restored stream: a time per event for every event of it", async () => {
    const result = await measureResponsesStreamDetokenise(5)
    expect(result.events).toBeGreaterThan(20)
    expect(result.perEventMs).toBeGreaterThan(0)
    expect(result.perEventMs).toBeLessThan(50)
  })
})
