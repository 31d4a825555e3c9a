import { describe, expect, it } from "vitest"
import { detokeniseResponseText } from "../../../../sdks/typescript/src/client/detokeniseResponse.ts"

describe("detokeniseResponseText", () => {
  const map = new Map([
    ["<PERSON_1_abcd>", 'Jane "JD" O\\Doe'],
    ["<EMAIL_1_wxyz>", "jane@example.com"]
  ])

  it("restores originals in every JSON string and keeps the JSON valid even when originals hold quotes", () => {
    const body = JSON.stringify({ choices: [{ message: { content: "Hi <PERSON_1_abcd>, mail <EMAIL_1_wxyz>" } }], id: "x" })
    const out = JSON.parse(detokeniseResponseText(body, map))
    expect(out.choices[0].message.content).toBe('Hi Jane "JD" O\\Doe, mail jane@example.com')
    expect(out.id).toBe("x")
  })

  it("leaves aliases that are not from this request untouched", () => {
    const body = JSON.stringify({ content: [{ type: "text", text: "<EMAIL_2_zzzz> and <EMAIL_1_wxyz>" }] })
    expect(JSON.parse(detokeniseResponseText(body, map)).content[0].text).toBe("<EMAIL_2_zzzz> and jane@example.com")
  })

  it("restores originals inside tool-call arguments (JSON text in a JSON string) so the arguments still parse", () => {
    const args = JSON.stringify({ to: "<PERSON_1_abcd>", cc: "<EMAIL_1_wxyz>" })
    const chat = JSON.stringify({ choices: [{ message: { tool_calls: [{ type: "function", function: { name: "mail", arguments: args } }] } }] })
    const call = JSON.parse(detokeniseResponseText(chat, map)).choices[0].message.tool_calls[0].function
    expect(JSON.parse(call.arguments)).toEqual({ to: 'Jane "JD" O\\Doe', cc: "jane@example.com" })
    const responses = JSON.stringify({ output: [{ type: "function_call", name: "mail", arguments: args }] })
    expect(JSON.parse(JSON.parse(detokeniseResponseText(responses, map)).output[0].arguments).to).toBe('Jane "JD" O\\Doe')
  })

  it("passes a body on byte for byte when nothing of the request was aliased (no parse and re-serialisation)", () => {
    const body = '{ "id": "x",\n  "content": "\\u0048i <EMAIL_1_wxyz>" }'
    expect(detokeniseResponseText(body, new Map())).toBe(body)
    expect(detokeniseResponseText("not json <EMAIL_1_wxyz>", new Map())).toBe("not json <EMAIL_1_wxyz>")
  })

  it("detokenises non-JSON text as text", () => {
    expect(detokeniseResponseText("plain <EMAIL_1_wxyz>", map)).toBe("plain jane@example.com")
  })
})
