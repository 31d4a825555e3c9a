// Frame-by-frame restoration of originals in OpenAI Responses streams: output text and function-call arguments cut
// across events, text held back released before the `.done` event (sequence numbers kept strictly increasing),
// whole events (response.completed's output, unknown event types) restored, the receipt trailer passed on.
import { describe, expect, it } from "vitest"
import { createSseDetokeniser, serialiseEvent, type SseEvent } from "../../../sdks/typescript/src/sseDetokeniser.ts"

const map = new Map([
  ["<EMAIL_1_ab23>", "jane@example.com"],
  ["<PERSON_1_cd45>", 'Ann "the" O\'Neil']
])

let seq = 0
const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`
const textDelta = (delta: string) => ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta })
const argsDelta = (delta: string) => ev("response.function_call_arguments.delta", { item_id: "fc_1", output_index: 1, delta })

const jsonOf = (events: ReadonlyArray<SseEvent>) => events.map((e) => e.json as Record<string, any>)
const deltas = (events: ReadonlyArray<SseEvent>, type: string) =>
  jsonOf(events).filter((j) => j.type === type).map((j) => j.delta).join("")

describe("SSE detokeniser: OpenAI Responses events", () => {
  const text = "Mail <EMAIL_1_ab23> now, <PERSON_1_cd45>!"
  const restored = `Mail jane@example.com now, Ann "the" O'Neil!`
  for (let cut = 1; cut < text.length; cut += 3) {
    it(`restores output text cut at ${cut}, releasing what was held back before output_text.done`, () => {
      seq = 0
      const sse = createSseDetokeniser("responses", map)
      const events = [
        ...sse.push(ev("response.created", { response: { id: "resp_1", instructions: "Write to <EMAIL_1_ab23>", output: [], usage: null } })),
        ...sse.push(textDelta(text.slice(0, cut))),
        ...sse.push(textDelta(text.slice(cut, -1))),
        ...sse.push(textDelta(text.slice(-1))),
        ...sse.push(ev("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text })),
        ...sse.push(ev("response.completed", { response: { id: "resp_1", output: [{ type: "message", content: [{ type: "output_text", text }] }], usage: { input_tokens: 1, output_tokens: 2 } } })),
        ...sse.end()
      ]
      for (const e of events) expect(e.event).toBe((e.json as { type: string }).type)
      expect(deltas(events, "response.output_text.delta")).toBe(restored)
      const json = jsonOf(events)
      expect(json[0]!.response.instructions).toBe("Write to jane@example.com")
      expect(json.find((j) => j.type === "response.output_text.done")!.text).toBe(restored)
      expect(json.at(-1)!.response.output[0].content[0].text).toBe(restored)
      // Strictly increasing sequence numbers, whatever was inserted.
      const numbers = json.map((j) => j.sequence_number)
      expect(numbers).toEqual(numbers.map((_, i) => i))
      expect(sse.completed()).toBe(true)
    })
  }

  it("function call arguments: JSON text restored with escaped originals, in deltas, .done and the output item", () => {
    seq = 0
    const sse = createSseDetokeniser("responses", map)
    const args = JSON.stringify({ to: "<EMAIL_1_ab23>", name: "<PERSON_1_cd45>" })
    const events = [
      ...sse.push(argsDelta(args.slice(0, 12))),
      ...sse.push(argsDelta(args.slice(12, 30))),
      ...sse.push(argsDelta(args.slice(30))),
      ...sse.push(ev("response.function_call_arguments.done", { item_id: "fc_1", output_index: 1, arguments: args })),
      ...sse.push(ev("response.output_item.done", { output_index: 1, item: { type: "function_call", id: "fc_1", call_id: "c", name: "send", arguments: args } }))
    ]
    const expected = { to: "jane@example.com", name: 'Ann "the" O\'Neil' }
    expect(JSON.parse(deltas(events, "response.function_call_arguments.delta"))).toEqual(expected)
    const json = jsonOf(events)
    expect(JSON.parse(json.find((j) => j.type === "response.function_call_arguments.done")!.arguments)).toEqual(expected)
    expect(JSON.parse(json.at(-1)!.item.arguments)).toEqual(expected)
  })

  it("an event type it does not know is passed on in place, its strings restored", () => {
    seq = 0
    const sse = createSseDetokeniser("responses", map)
    const events = [...sse.push(ev("response.novel_thing", { item_id: "x", text: "for <PERSON_1_cd45>", nested: [{ note: "<EMAIL_1_ab23>" }] }))]
    expect(events).toHaveLength(1)
    expect(events[0]!.event).toBe("response.novel_thing")
    expect(events[0]!.json).toEqual({ type: "response.novel_thing", sequence_number: 0, item_id: "x", text: `for Ann "the" O'Neil`, nested: [{ note: "jane@example.com" }] })
  })

  it("text held back when the stream ends without .done events is released by the terminal event, or at the end", () => {
    seq = 0
    const sse = createSseDetokeniser("responses", map)
    const events = [...sse.push(textDelta("see <EMAIL_1_")), ...sse.push(ev("response.completed", { response: { id: "r" } }))]
    expect(deltas(events, "response.output_text.delta")).toBe("see <EMAIL_1_")
    expect(jsonOf(events).map((j) => j.sequence_number)).toEqual([0, 1, 2])

    seq = 0
    const cut = createSseDetokeniser("responses", map)
    const partial = [...cut.push(textDelta("see <EMAIL_1_")), ...cut.end()]
    expect(deltas(partial, "response.output_text.delta")).toBe("see <EMAIL_1_")
    expect(cut.completed()).toBe(false)
  })

  it("passes the receipt-v2 trailer after response.completed unchanged", () => {
    seq = 0
    const sse = createSseDetokeniser("responses", map)
    const events = [...sse.push(ev("response.completed", { response: { id: "r" } }) + 'event: receipt-v2\ndata: {"v":2}\n\n')]
    expect(sse.receipt()).toEqual({ v: 2 })
    expect(serialiseEvent(events.at(-1)!)).toBe('event: receipt-v2\ndata: {"v":2}\n\n')
  })
})
