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

  it("detokenises non-JSON text as text", () => {
    expect(detokeniseResponseText("plain <EMAIL_1_wxyz>", map)).toBe("plain jane@example.com")
  })
})
