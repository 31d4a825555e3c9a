import { describe, expect, it } from "vitest"
import { detokenise, EgressRefusal, tokeniseRequest } from "../../../../sdks/typescript/src/tokeniser/index.ts"

/**
 * The Responses and count_tokens routes under the egress policy (sdks/vectors/egress-policy.json): every place an
 * end-to-end client puts user text is tokenised.
 */
const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"

describe("tokeniseRequest: responses and messages.count_tokens", () => {
  it("responses: a string input and instructions", async () => {
    const out = await tokeniseRequest("responses", { model: "m", instructions: `Reply to ${EMAIL}`, input: `Call ${PHONE}` }, { names: "off" })
    const sent = out.body as { instructions: string; input: string }
    expect(sent.instructions).not.toContain(EMAIL)
    expect(sent.input).not.toContain(PHONE)
    expect(detokenise(sent.input, out.map)).toBe(`Call ${PHONE}`)
  })

  it("responses: message items (string content, input_text / output_text parts), function calls and their outputs", async () => {
    const body = {
      model: "m",
      input: [
        { role: "user", content: `Write to ${EMAIL}` },
        { type: "message", role: "user", content: [{ type: "input_text", text: `or ${PHONE}` }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: `Sure, ${EMAIL}` }] },
        { type: "function_call", call_id: "c1", name: "send", arguments: JSON.stringify({ to: EMAIL }) },
        { type: "function_call_output", call_id: "c1", output: `sent to ${EMAIL}` },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: `Thinking of ${EMAIL}` }] }
      ]
    }
    const out = await tokeniseRequest("responses", body, { names: "off" })
    const text = new TextDecoder().decode(out.bodyBytes)
    expect(text).not.toContain(EMAIL)
    expect(text).not.toContain(PHONE)
    const sent = out.body as typeof body
    expect(JSON.parse(detokenise((sent.input[3] as { arguments: string }).arguments, out.map))).toEqual({ to: EMAIL })
  })

  it("responses: an input that is neither a string nor an array is refused", async () => {
    const refusal = await tokeniseRequest("responses", { model: "m", input: { role: "user" } }, { names: "off" }).catch((e: unknown) => e)
    expect(refusal).toBeInstanceOf(EgressRefusal)
    expect((refusal as EgressRefusal).details).toEqual({ path: "/input", setting: "PASSTHROUGH_PATHS" })
  })

  it("messages.count_tokens: system and messages, as on the messages route", async () => {
    const out = await tokeniseRequest("messages.count_tokens", { model: "m", system: `I am ${EMAIL}`, messages: [{ role: "user", content: `Call ${PHONE}` }] }, { names: "off" })
    const text = new TextDecoder().decode(out.bodyBytes)
    expect(text).not.toContain(EMAIL)
    expect(text).not.toContain(PHONE)
  })
})
