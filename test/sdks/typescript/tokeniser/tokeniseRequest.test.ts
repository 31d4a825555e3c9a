import canonicalize from "canonicalize"
import { describe, expect, it } from "vitest"
import { detokenise, InvalidRequestBody, tokeniseRequest } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"

describe("tokeniseRequest", () => {
  it("tokenises OpenAI chat content (strings and text parts), aliases end-user identifiers, passes structure, and requests usage on streams", async () => {
    const body = {
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { foo: 1 },
      temperature: 0.2,
      metadata: { note: EMAIL },
      messages: [
        { role: "system", content: `Support mailbox ${EMAIL}` },
        {
          role: "user",
          name: "u1",
          content: [
            { type: "text", text: `Call ${PHONE} or mail ${EMAIL}` }
          ]
        }
      ]
    }
    const before = structuredClone(body)
    const out = await tokeniseRequest("chat.completions", body, { names: "off" })
    const sent = out.body as typeof body
    expect(body).toEqual(before)
    const system = sent.messages[0]!.content as string
    const parts = sent.messages[1]!.content as Array<{ type: string; text?: string }>
    expect(system).not.toContain(EMAIL)
    expect(parts[0]!.text).not.toContain(PHONE)
    expect(parts[0]!.text).not.toContain(EMAIL)
    // End-user identifiers: a device-stable alias of the whole value, never the value (the egress policy).
    expect(sent.metadata.note).toMatch(/^USER_[a-z2-9]{10}$/)
    expect((sent.messages[1] as { name: string }).name).toMatch(/^USER_[a-z2-9]{10}$/)
    expect(sent.temperature).toBe(0.2)
    expect(sent.stream_options).toEqual({ foo: 1, include_usage: true })
    expect(detokenise(system, out.map)).toBe(body.messages[0]!.content)
    expect(detokenise(parts[0]!.text!, out.map)).toBe(`Call ${PHONE} or mail ${EMAIL}`)
    expect(out.detectorsFired).toEqual({ EMAIL: 2, PHONE: 1, USER: 2 })
    expect(out.passthrough).toEqual([])
    expect(out.map.size).toBe(2)
    expect(new TextDecoder().decode(out.bodyBytes)).toBe(canonicalize(out.body))
  })

  it("does not add stream_options to non-streamed calls", async () => {
    const out = await tokeniseRequest("chat.completions", { model: "m", messages: [{ role: "user", content: "hi" }] }, { names: "off" })
    expect(out.body).toEqual({ model: "m", messages: [{ role: "user", content: "hi" }] })
    expect(out.detectorsFired).toEqual({})
  })

  it("tokenises Anthropic system (string or blocks), message blocks and tool results", async () => {
    const body = {
      model: "claude",
      max_tokens: 10,
      system: [{ type: "text", text: `Operator: ${EMAIL}` }],
      messages: [
        { role: "user", content: `Mail ${EMAIL}` },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "lookup", input: { q: EMAIL } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: `Phone ${PHONE}` }] }] }
      ]
    }
    const out = await tokeniseRequest("messages", body, { names: "off" })
    const sent = out.body as any
    const alias = [...out.map.entries()].find(([, v]) => v === EMAIL)![0]
    expect(sent.system[0].text).toBe(`Operator: ${alias}`)
    expect(sent.messages[0].content).toBe(`Mail ${alias}`)
    // The assistant's earlier tool call: its input was restored for the app, and goes back tokenised.
    expect(sent.messages[1].content[0]).toEqual({ type: "tool_use", id: "t1", name: "lookup", input: { q: alias } })
    expect(sent.messages[2].content[0].content[0].text).not.toContain(PHONE)
    expect(sent.stream_options).toBeUndefined()

    const plain = await tokeniseRequest("messages", { system: `Hi ${EMAIL}`, messages: [] }, { names: "off" })
    expect((plain.body as any).system).not.toContain(EMAIL)
  })

  it("tokenises the arguments of earlier OpenAI tool calls (JSON strings inside, nested too) and leaves unchanged arguments byte for byte", async () => {
    const args = JSON.stringify({ to: EMAIL, call: { numbers: [PHONE, 7], urgent: true } }, null, 2)
    const untouched = '{ "city": "Paris",  "days": 3 }'
    const body = {
      model: "gpt-4o-mini",
      messages: [
        { role: "user", content: `Mail ${EMAIL}` },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "send", arguments: args } },
            { id: "c2", type: "function", function: { name: "weather", arguments: untouched } },
            { id: "c3", type: "function", function: { name: "raw", arguments: `not json ${EMAIL}` } }
          ]
        },
        { role: "tool", tool_call_id: "c1", content: `sent to ${EMAIL}` },
        { role: "assistant", content: null, function_call: { name: "legacy", arguments: JSON.stringify({ phone: PHONE }) } }
      ]
    }
    const out = await tokeniseRequest("chat.completions", body, { names: "off" })
    const sent = out.body as any
    const wire = new TextDecoder().decode(out.bodyBytes)
    expect(wire).not.toContain(EMAIL)
    expect(wire).not.toContain("7946")
    const email = [...out.map.entries()].find(([, v]) => v === EMAIL)![0]
    const phone = [...out.map.entries()].find(([, v]) => v === PHONE)![0]
    // One alias per value across content and arguments; the arguments stay JSON with their other values.
    expect(sent.messages[0].content).toBe(`Mail ${email}`)
    expect(JSON.parse(sent.messages[1].tool_calls[0].function.arguments)).toEqual({ to: email, call: { numbers: [phone, 7], urgent: true } })
    expect(sent.messages[1].tool_calls[1].function.arguments).toBe(untouched)
    expect(sent.messages[1].tool_calls[2].function.arguments).toBe(`not json ${email}`)
    expect(sent.messages[2].content).toBe(`sent to ${email}`)
    expect(JSON.parse(sent.messages[3].function_call.arguments)).toEqual({ phone })
    expect(sent.messages[1].tool_calls[0]).toMatchObject({ id: "c1", type: "function", function: { name: "send" } })
    expect(out.detectorsFired).toEqual({ EMAIL: 4, PHONE: 2 })
    // What the model answers with these aliases comes back as the originals.
    expect(detokenise(sent.messages[1].tool_calls[0].function.arguments, out.map)).toBe(JSON.stringify({ to: EMAIL, call: { numbers: [PHONE, 7], urgent: true } }))
  })

  it("tokenises embeddings input given as a string or a list of strings", async () => {
    const one = await tokeniseRequest("embeddings", { model: "e", input: `x ${EMAIL}` }, { names: "off" })
    expect((one.body as any).input).not.toContain(EMAIL)
    const many = await tokeniseRequest("embeddings", { model: "e", input: [EMAIL, "plain", `${EMAIL}!`] }, { names: "off" })
    const input = (many.body as any).input as Array<string>
    expect(input[0]).toBe(input[2]!.slice(0, -1))
    expect(input[1]).toBe("plain")
    expect(many.detectorsFired).toEqual({ EMAIL: 2 })
    const ids = await tokeniseRequest("embeddings", { model: "e", input: [1, 2, 3] }, { names: "off" })
    expect((ids.body as any).input).toEqual([1, 2, 3])
  })

  it("leaves the caller's body as it was, unless it is handed over: then the same bytes, tokenised in place", async () => {
    const turn = () => ({ model: "m", stream: true, messages: [{ role: "user", content: "Mail jane.doe@example.com" }] })
    const secret = new Uint8Array(32).fill(7)
    const kept = turn()
    const copied = await tokeniseRequest("chat.completions", kept, { names: "off", secret })
    expect(kept).toEqual(turn())
    const handed = turn()
    const inPlace = await tokeniseRequest("chat.completions", handed, { names: "off", secret, bodyIsHandedOver: true })
    expect(new TextDecoder().decode(inPlace.bodyBytes)).toBe(new TextDecoder().decode(copied.bodyBytes))
    expect(inPlace.body).toBe(handed)
    expect(JSON.stringify(handed)).not.toContain("jane.doe@example.com")
  })

  it("rejects bodies that are not objects or lack a messages array", async () => {
    await expect(tokeniseRequest("chat.completions", "text", { names: "off" })).rejects.toBeInstanceOf(InvalidRequestBody)
    await expect(tokeniseRequest("messages", { model: "m" }, { names: "off" })).rejects.toBeInstanceOf(InvalidRequestBody)
    // JSON text may escape a lone surrogate; such a body has no canonical form to attest, so it is refused.
    await expect(tokeniseRequest("chat.completions", JSON.parse('{"messages":[{"role":"user","content":"a\\ud800b"}]}'), { names: "off" }))
      .rejects.toThrow(/cannot be serialised as canonical JSON/)
  })
})

describe("tokeniseRequest's bytes are already canonical (what lets the attestation hash them as they are)", () => {
  it("re-canonicalising the bytes gives the same bytes, for unicode, escapes, numbers and key order", async () => {
    const { canonicalBytes, parseJsonBytes } = await import("../../../../sdks/typescript/src/wire/crypto/jcs.ts")
    const bodies = [
      { model: "m", messages: [{ role: "user", content: "Say hello." }] },
      { response_format: { z: 1, a: [1e21, 1e-7, -0, 0.1, 123456789012345680000], "é": { y: null, x: true } }, model: "m", messages: [{ content: `naïve é 😀 \u2028 "quoted" \\ tab\t ${EMAIL}`, role: "user" }] },
      { model: "m", stream: true, messages: [{ role: "user", content: [{ type: "text", text: `call ${PHONE}` }] }] }
    ]
    for (const body of bodies) {
      const out = await tokeniseRequest("chat.completions", body, { names: "off" })
      expect(out.canonical).toBe(true)
      expect(new TextDecoder().decode(canonicalBytes(parseJsonBytes(out.bodyBytes)))).toBe(new TextDecoder().decode(out.bodyBytes))
    }
  })
})
