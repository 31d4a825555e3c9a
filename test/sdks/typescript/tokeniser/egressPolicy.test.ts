import { describe, expect, it } from "vitest"
import { EgressRefusal, endUserAlias, tokeniseRequest } from "../../../../sdks/typescript/src/tokeniser/index.ts"
import { MAX_EGRESS_DEPTH } from "../../../../sdks/typescript/src/wire/egressPolicy.ts"

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const NAME = "Maria Kowalska"
const PNG_DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const refusalOf = async (promise: Promise<unknown>): Promise<EgressRefusal> => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(EgressRefusal)
  return error as EgressRefusal
}

const bytesText = (out: { bodyBytes: Uint8Array }) => new TextDecoder().decode(out.bodyBytes)

describe("egress policy: every leak of issue 31 is closed in the tokeniser", () => {
  it("OpenAI user, safety_identifier, metadata values and messages[].name leave as device-stable USER_ aliases, never in the clear", async () => {
    const secret = new Uint8Array(32).fill(7)
    const body = {
      model: "m",
      user: EMAIL,
      safety_identifier: EMAIL,
      metadata: { customer: NAME, phone: PHONE },
      messages: [{ role: "user", name: "maria_k", content: "hello" }]
    }
    const first = await tokeniseRequest("chat.completions", body, { names: "off", identifierSecret: secret })
    const second = await tokeniseRequest("chat.completions", body, { names: "off", identifierSecret: secret })
    const text = bytesText(first)
    for (const value of [EMAIL, NAME, PHONE, "maria_k"]) expect(text).not.toContain(value)
    const sent = first.body as typeof body
    expect(sent.user).toMatch(/^USER_[a-z2-9]{10}$/)
    expect(sent.messages[0]!.name).toMatch(/^[a-zA-Z0-9_-]+$/)
    // The same end user, the same alias, in every request from the device (abuse monitoring and caching still work).
    expect(sent.user).toBe(sent.safety_identifier)
    expect(bytesText(second)).toBe(text)
    const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    expect(sent.metadata.customer).toBe(await endUserAlias(key, NAME))
    expect(first.detectorsFired).toEqual({ USER: 5 })
    // Another device (another secret): unrelated aliases.
    const other = await tokeniseRequest("chat.completions", body, { names: "off", identifierSecret: new Uint8Array(32).fill(8) })
    expect((other.body as typeof body).user).not.toBe(sent.user)
  })

  it("Anthropic metadata.user_id is aliased; system and content text is tokenised", async () => {
    const out = await tokeniseRequest("messages", {
      model: "m",
      max_tokens: 10,
      metadata: { user_id: EMAIL },
      system: [{ type: "text", text: `Agent line ${PHONE}` }],
      messages: [{ role: "user", content: [{ type: "text", text: `mail ${EMAIL}` }] }]
    }, { names: "off" })
    const text = bytesText(out)
    expect(text).not.toContain(EMAIL)
    expect(text).not.toContain(PHONE)
    expect((out.body as { metadata: { user_id: string } }).metadata.user_id).toMatch(/^USER_/)
  })

  it("an image_url data URL, an Anthropic image block, input_audio and a Responses input_image are refused by default: 415 unsupported_content naming the part", async () => {
    const cases: Array<[Parameters<typeof tokeniseRequest>[0], unknown, string, string]> = [
      ["chat.completions", { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "read" }, { type: "image_url", image_url: { url: PNG_DATA_URL } }] }] }, "/messages/0/content/1", "image"],
      ["chat.completions", { model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] }, "/messages/0/content/0", "audio"],
      ["messages", { model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } }] }] }, "/messages/0/content/0/source", "image"],
      ["responses", { model: "m", input: [{ role: "user", content: [{ type: "input_image", image_url: PNG_DATA_URL, detail: "auto" }] }] }, "/input/0/content/0", "image"]
    ]
    for (const [route, body, path, kind] of cases) {
      const refusal = await refusalOf(tokeniseRequest(route, body, { names: "off" }))
      expect(refusal.code).toBe("unsupported_content")
      expect(refusal.details).toEqual({ path, kind, setting: "MEDIA_POLICY" })
      expect(refusal.message).not.toContain("iVBOR")
    }
  })

  it("MEDIA_POLICY=pass sends the part as it is and declares it; a remote URL that names somebody is still refused", async () => {
    const body = { model: "m", messages: [{ role: "user", content: [{ type: "text", text: `hi ${EMAIL}` }, { type: "image_url", image_url: { url: "https://cdn.example.com/scan.png" } }] }] }
    const out = await tokeniseRequest("chat.completions", body, { names: "off", mediaPolicy: "pass" })
    expect(out.passthrough).toEqual([{ path: "/messages/0/content/1", kind: "image" }])
    expect(bytesText(out)).toContain("https://cdn.example.com/scan.png")
    const leaky = { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `https://cdn.example.com/${EMAIL}/scan.png` } }] }] }
    const refusal = await refusalOf(tokeniseRequest("chat.completions", leaky, { names: "off", mediaPolicy: "pass" }))
    expect(refusal.code).toBe("unsupported_content")
    expect(refusal.message).not.toContain(EMAIL)
  })

  it("MEDIA_POLICY=redact without a redactor, or for audio, refuses; with one, the image is replaced by the redactor's output and declared image-redacted", async () => {
    const body = { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: PNG_DATA_URL, detail: "low" } }] }] }
    expect((await refusalOf(tokeniseRequest("chat.completions", body, { names: "off", mediaPolicy: "redact" }))).code).toBe("unsupported_content")
    const seen: Array<string> = []
    const out = await tokeniseRequest("chat.completions", body, {
      names: "off",
      mediaPolicy: "redact",
      redactImage: async (image) => {
        seen.push(image.mediaType)
        return { bytes: new Uint8Array([1, 2, 3]), mediaType: "image/png" }
      }
    })
    expect(seen).toEqual(["image/png"])
    expect((out.body as typeof body).messages[0]!.content[0]).toEqual({ type: "image_url", image_url: { url: "data:image/png;base64,AQID", detail: "low" } })
    expect(out.passthrough).toEqual([{ path: "/messages/0/content/0", kind: "image-redacted" }])
    const remote = { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x.example/a.png" } }] }] }
    expect((await refusalOf(tokeniseRequest("chat.completions", remote, { names: "off", mediaPolicy: "redact", redactImage: async (i) => i }))).path).toBe("/messages/0/content/0")
    const audio = { model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] }
    expect((await refusalOf(tokeniseRequest("chat.completions", audio, { names: "off", mediaPolicy: "redact", redactImage: async (i) => i }))).kind).toBe("audio")
  })

  it("a field invented for the test and a part type invented for the test are refused (400 unsupported_field with the path and the setting)", async () => {
    const field = await refusalOf(tokeniseRequest("chat.completions", { model: "m", x_trace_note: EMAIL, messages: [] }, { names: "off" }))
    expect(field.code).toBe("unsupported_field")
    expect(field.details).toEqual({ path: "/x_trace_note", setting: "PASSTHROUGH_PATHS" })
    expect(field.message).not.toContain(EMAIL)
    const part = await refusalOf(tokeniseRequest("chat.completions", { model: "m", messages: [{ role: "user", content: [{ type: "hologram", data: EMAIL }] }] }, { names: "off" }))
    expect(part.details.path).toBe("/messages/0/content/0")
    const nested = await refusalOf(tokeniseRequest("messages", { model: "m", max_tokens: 1, messages: [{ role: "user", content: [{ type: "text", text: "x", secret_note: EMAIL }] }] }, { names: "off" }))
    expect(nested.details.path).toBe("/messages/0/content/0/secret_note")
    const role = await refusalOf(tokeniseRequest("chat.completions", { model: "m", messages: [{ role: "narrator", content: "x" }] }, { names: "off" }))
    expect(role.details.path).toBe("/messages/0")
  })

  it("PASSTHROUGH_PATHS lets a named field through untokenised and declares it (paths, never values)", async () => {
    const body = { model: "m", x_trace_note: "ticket 42", messages: [{ role: "user", content: "hi", x_tag: "a" }, { role: "user", content: "yo", x_tag: "b" }] }
    const out = await tokeniseRequest("chat.completions", body, { names: "off", passthroughPaths: ["/x_trace_note", "/messages/*/x_tag"] })
    expect(out.passthrough).toEqual([
      { path: "/messages/0/x_tag", kind: "field" },
      { path: "/messages/1/x_tag", kind: "field" },
      { path: "/x_trace_note", kind: "field" }
    ])
    expect((out.body as typeof body).x_trace_note).toBe("ticket 42")
    // web_search_options.user_location is refused by the policy itself (a location) unless named.
    const located = { model: "m", messages: [], web_search_options: { user_location: { type: "approximate", approximate: { city: "Leeds" } } } }
    expect((await refusalOf(tokeniseRequest("chat.completions", located, { names: "off" }))).details.path).toBe("/web_search_options/user_location")
  })

  it("deeply nested metadata stays bounded; a body nested past the documented depth is refused (nesting_too_deep)", async () => {
    let deep: unknown = "x"
    for (let i = 0; i < MAX_EGRESS_DEPTH + 5; i++) deep = { d: deep }
    const refusal = await refusalOf(tokeniseRequest("chat.completions", { model: "m", metadata: { k: deep }, messages: [] }, { names: "off" }))
    expect(refusal.code).toBe("nesting_too_deep")
    expect(refusal.path.startsWith("/metadata/k/d/d")).toBe(true)
    // The path is spelled out only for the refusal, with JSON-pointer escapes and array indexes.
    let mixed: unknown = "x"
    for (let i = 0; i < MAX_EGRESS_DEPTH; i++) mixed = i % 2 === 0 ? [mixed] : { "a/b~c": mixed }
    const escaped = await refusalOf(tokeniseRequest("chat.completions", { model: "m", metadata: { k: mixed }, messages: [] }, { names: "off" }))
    expect(escaped.code).toBe("nesting_too_deep")
    // The first container past depth 64 (body 1, metadata 2, k 3: the 63rd level of `mixed`), the path main gave before.
    expect(escaped.path).toBe(`/metadata/k${"/a~1b~0c/0".repeat(31)}`)
    // 100,000 levels: refused in bounded time, without blowing the stack.
    let deeper: unknown = []
    for (let i = 0; i < 100_000; i++) deeper = [deeper]
    const started = performance.now()
    expect((await refusalOf(tokeniseRequest("chat.completions", { model: "m", messages: [], stop: deeper }, { names: "off" }))).code).toBe("nesting_too_deep")
    expect(performance.now() - started).toBeLessThan(5_000)
    // Nested metadata within the limit: every string inside gets its alias.
    const ok = await tokeniseRequest("chat.completions", { model: "m", metadata: { a: { b: { c: EMAIL } } }, messages: [] }, { names: "off" })
    expect(bytesText(ok)).not.toContain(EMAIL)
  })

  it("keeps what was handled well: tool-call arguments and Anthropic text documents are tokenised", async () => {
    const out = await tokeniseRequest("chat.completions", {
      model: "m",
      messages: [
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "send", arguments: JSON.stringify({ to: EMAIL }) } }] },
        { role: "tool", tool_call_id: "c1", content: `sent to ${EMAIL}` }
      ]
    }, { names: "off" })
    expect(bytesText(out)).not.toContain(EMAIL)
    const doc = await tokeniseRequest("messages", {
      model: "m",
      max_tokens: 5,
      messages: [{ role: "user", content: [{ type: "document", title: "Note", source: { type: "text", media_type: "text/plain", data: `call ${PHONE}` } }] }]
    }, { names: "off" })
    expect(bytesText(doc)).not.toContain(PHONE)
  })

  it("the Responses API: input text, instructions and function call outputs are tokenised; an unknown item type is refused", async () => {
    const out = await tokeniseRequest("responses", {
      model: "m",
      instructions: `Escalate to ${EMAIL}`,
      input: [
        { role: "user", content: `My number is ${PHONE}` },
        { type: "function_call", call_id: "c", name: "lookup", arguments: JSON.stringify({ email: EMAIL }) },
        { type: "function_call_output", call_id: "c", output: `found ${EMAIL}` }
      ],
      user: EMAIL
    }, { names: "off" })
    const text = bytesText(out)
    expect(text).not.toContain(EMAIL)
    expect(text).not.toContain(PHONE)
    expect((await refusalOf(tokeniseRequest("responses", { model: "m", input: [{ type: "mcp_call", id: "x" }] }, { names: "off" }))).details.path).toBe("/input/0")
  })
})
