// egress-policy-cases.json: request bodies of the five client routes walked with the egress policy
// (sdks/vectors/egress-policy.json) by the reference engine (tokeniseRequest), names off, fixed secrets: what every
// engine must send (the exact JCS bytes, what was let through untokenised, the detector counts, the alias map) or
// the refusal it must answer instead (code, JSON pointer, media kind).
import { tokeniseRequest, type MediaPolicy, type Route } from "../../typescript/src/tokeniser/tokeniseRequest.ts"
import { EgressRefusal, MAX_EGRESS_DEPTH } from "../../typescript/src/wire/egressPolicy.ts"
import { hexToBytes } from "../../typescript/src/wire/crypto/hex.ts"

/** The per-request alias secret (aliases.json's request secret): `<TYPE_N_tag>` aliases are the same on every run. */
const REQUEST_SECRET_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
/** The device alias secret end-user identifiers are aliased under (`USER_<tag>`). */
const IDENTIFIER_SECRET_HEX = "07070707070707070707070707070707070707070707070707070707070707ff"

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const IBAN = "DE89 3704 0044 0532 0130 00"
const NAME = "Maria Kowalska"
const PNG_DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

interface CaseInput {
  readonly name: string
  readonly route: Route
  readonly body: Record<string, unknown>
  readonly media_policy?: MediaPolicy
  readonly passthrough_paths?: ReadonlyArray<string>
  /** Values that must not appear in what is sent (checked here, so the generator fails on a leak). */
  readonly never_sent?: ReadonlyArray<string>
}

/** `{ [key]: { [key]: ... value } }`, `levels` objects deep. */
const nested = (key: string, levels: number, value: unknown): unknown => {
  let out = value
  for (let i = 0; i < levels; i++) out = { [key]: out }
  return out
}

const nestedArrays = (levels: number, value: unknown): unknown => {
  let out = value
  for (let i = 0; i < levels; i++) out = [out]
  return out
}

const chat = (content: unknown, extra: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content }], ...extra })
const anthropic = (content: unknown, extra: Record<string, unknown> = {}) => ({ model: "m", max_tokens: 16, messages: [{ role: "user", content }], ...extra })

const CASES: ReadonlyArray<CaseInput> = [
  // chat.completions: the leaks of issue 31
  { name: "chat: user holding an e-mail leaves as a USER_ alias", route: "chat.completions", body: chat(`Hi, I am ${EMAIL}`, { user: EMAIL }), never_sent: [EMAIL] },
  {
    name: "chat: metadata values (a name, a phone number) leave as USER_ aliases; a number passes",
    route: "chat.completions",
    body: chat("hello", { store: true, metadata: { customer: NAME, phone: PHONE, tier: 3 } }),
    never_sent: [NAME, PHONE]
  },
  { name: "chat: messages[].name is aliased (fits ^[a-zA-Z0-9_-]+$)", route: "chat.completions", body: { model: "m", messages: [{ role: "system", name: "ops_bot", content: "Be brief." }, { role: "user", name: "maria_k", content: "hello" }] }, never_sent: ["maria_k", "ops_bot"] },
  {
    name: "chat: user, safety_identifier and prompt_cache_key with the same value get the same alias",
    route: "chat.completions",
    body: chat("hello", { user: EMAIL, safety_identifier: EMAIL, prompt_cache_key: `${EMAIL}-cache` }),
    never_sent: [EMAIL]
  },
  {
    name: "chat: nested metadata within the depth limit: every string inside is aliased",
    route: "chat.completions",
    body: chat("hello", { metadata: { contact: { primary: { email: EMAIL, label: "home" } } } }),
    never_sent: [EMAIL]
  },
  {
    name: "chat: an image_url data URL is refused by default (415, the part)",
    route: "chat.completions",
    body: chat([{ type: "text", text: `read this for ${EMAIL}` }, { type: "image_url", image_url: { url: PNG_DATA_URL } }])
  },
  {
    name: "chat: media pass sends an image_url data URL as it is, declared; the text is still tokenised",
    route: "chat.completions",
    body: chat([{ type: "text", text: `read this for ${EMAIL}` }, { type: "image_url", image_url: { url: PNG_DATA_URL, detail: "low" } }]),
    media_policy: "pass",
    never_sent: [EMAIL]
  },
  {
    name: "chat: media pass with a remote URL holding an e-mail is refused",
    route: "chat.completions",
    body: chat([{ type: "image_url", image_url: { url: `https://cdn.example.com/u/${EMAIL}/scan.png` } }]),
    media_policy: "pass"
  },
  {
    name: "chat: media pass with a remote URL naming nobody is sent, declared",
    route: "chat.completions",
    body: chat([{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "https://cdn.example.com/scan.png" } }]),
    media_policy: "pass"
  },
  { name: "chat: input_audio is refused by default (kind audio)", route: "chat.completions", body: chat([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]) },
  {
    name: "chat: a file part under media redact is refused (only images can be redacted)",
    route: "chat.completions",
    body: chat([{ type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } }]),
    media_policy: "redact"
  },
  { name: "chat: a field invented for the test is refused (400, its path)", route: "chat.completions", body: chat("hi", { x_trace_note: EMAIL }) },
  { name: "chat: a part type invented for the test is refused (the part's path)", route: "chat.completions", body: chat([{ type: "text", text: "hi" }, { type: "hologram", data: EMAIL }]) },
  { name: "chat: a role the policy does not know is refused", route: "chat.completions", body: { model: "m", messages: [{ role: "narrator", content: "x" }] } },
  { name: "chat: a value of a JSON type the policy does not expect is refused (content as a number)", route: "chat.completions", body: chat(42) },
  {
    name: "chat: web_search_options.user_location is refused by the policy itself",
    route: "chat.completions",
    body: chat("weather?", { web_search_options: { search_context_size: "low", user_location: { type: "approximate", approximate: { city: "Leeds" } } } })
  },
  {
    name: "chat: passthrough paths with * let named fields through untokenised, declared and sorted by path",
    route: "chat.completions",
    body: { model: "m", x_trace_note: "ticket 42", messages: [{ role: "user", content: `mail ${EMAIL}`, x_tag: "a" }, { role: "user", content: "yo", x_tag: "b" }] },
    passthrough_paths: ["/x_trace_note", "/messages/*/x_tag"],
    never_sent: [EMAIL]
  },
  {
    name: "chat: a passthrough pattern lets an invented part type through whole; the other parts are still walked",
    route: "chat.completions",
    body: chat([{ type: "hologram", data: "opaque" }, { type: "text", text: `call ${PHONE}` }]),
    passthrough_paths: ["/messages/*/content/0"],
    never_sent: [PHONE]
  },
  { name: "chat: a passthrough pattern does not match a longer path", route: "chat.completions", body: chat("hi", { x_outer: { x_inner: 1 } }), passthrough_paths: ["/x_outer/*"] },
  {
    name: "chat: metadata nested past 64 levels is refused before anything else (nesting_too_deep, where it passed the limit)",
    route: "chat.completions",
    body: chat("hi", { x_unknown: 1, metadata: { k: nested("d", MAX_EGRESS_DEPTH, EMAIL) } })
  },
  {
    name: "chat: exactly 64 levels are accepted",
    route: "chat.completions",
    body: chat("hi", { stop: nestedArrays(MAX_EGRESS_DEPTH - 1, "END") })
  },
  {
    name: "chat: tool-call arguments (JSON text) and tool results are tokenised; unchanged arguments keep their bytes",
    route: "chat.completions",
    body: {
      model: "m",
      messages: [
        { role: "user", content: `Send the invoice to ${EMAIL}` },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "send", arguments: `{"to": "${EMAIL}", "cc": ["${PHONE}"], "copies": 2}` } },
            { id: "c2", type: "function", function: { name: "noop", arguments: `{ "spacing" :  "kept" }` } },
            { id: "c3", type: "function", function: { name: "raw", arguments: `not json: ${EMAIL}` } }
          ]
        },
        { role: "tool", tool_call_id: "c1", content: `sent to ${EMAIL}` }
      ]
    },
    never_sent: [EMAIL, PHONE]
  },
  {
    name: "chat: an assistant refusal and a developer message are tokenised; stream gets include_usage",
    route: "chat.completions",
    body: {
      model: "m",
      stream: true,
      stream_options: { include_obfuscation: false },
      messages: [
        { role: "developer", content: [{ type: "text", text: `Escalate to ${EMAIL}` }] },
        { role: "assistant", content: null, refusal: `I cannot share ${PHONE}` }
      ]
    },
    never_sent: [EMAIL, PHONE]
  },
  // messages (Anthropic)
  {
    name: "messages: metadata.user_id is aliased; system blocks and text are tokenised",
    route: "messages",
    body: anthropic([{ type: "text", text: `mail ${EMAIL}` }], { metadata: { user_id: EMAIL }, system: [{ type: "text", text: `Agent line ${PHONE}`, cache_control: { type: "ephemeral" } }] }),
    never_sent: [EMAIL, PHONE]
  },
  {
    name: "messages: an image block is refused by default (the source's path)",
    route: "messages",
    body: anthropic([{ type: "text", text: "what is in it?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }])
  },
  {
    // What Claude Code sends (beta Messages API): a role "system" message with per-turn output_config and clear_at,
    // context_management edits, adaptive thinking, its device/session JSON in metadata.user_id.
    name: "messages: Claude Code's beta shape (system-role message, output_config, clear_at, context_management) is tokenised, not refused",
    route: "messages",
    body: {
      model: "m",
      max_tokens: 16,
      messages: [
        { role: "user", content: [{ type: "text", text: `Reply to ${NAME} at ${EMAIL}` }] },
        { role: "system", content: [{ type: "text", text: `Working directory of ${EMAIL}`, cache_control: { type: "ephemeral" } }], output_config: { effort: "medium" }, clear_at: "never" }
      ],
      metadata: { user_id: JSON.stringify({ device_id: "9c25f252", account_uuid: "", session_id: "59b4c9e3" }) },
      thinking: { type: "adaptive", display: "omitted" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      output_config: { effort: "medium" },
      stream: true
    },
    never_sent: [EMAIL]
  },
  { name: "messages: metadata with a member the policy does not name is refused", route: "messages", body: anthropic("hi", { metadata: { user_id: "u1", session: "s1" } }) },
  {
    name: "messages: text documents, tool_use input and tool_result content are tokenised",
    route: "messages",
    body: {
      model: "m",
      max_tokens: 16,
      messages: [
        { role: "user", content: [{ type: "document", title: `Note for ${NAME}`, source: { type: "text", media_type: "text/plain", data: `call ${PHONE}` } }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "lookup", input: { email: EMAIL, limit: 5 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: `found ${IBAN}` }] }] }
      ]
    },
    never_sent: [PHONE, EMAIL, IBAN]
  },
  { name: "messages: a member invented inside a text block is refused", route: "messages", body: anthropic([{ type: "text", text: "x", secret_note: EMAIL }]) },
  { name: "messages: a block type the policy refuses (web_search_tool_result) is refused", route: "messages", body: anthropic([{ type: "web_search_tool_result", tool_use_id: "s1", content: [] }]) },
  {
    name: "messages: media pass sends a base64 PDF document, declared as a document",
    route: "messages",
    body: anthropic([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }, { type: "text", text: `summarise for ${EMAIL}` }]),
    media_policy: "pass",
    never_sent: [EMAIL]
  },
  // messages.count_tokens
  {
    name: "count_tokens: system and messages are tokenised",
    route: "messages.count_tokens",
    body: { model: "m", system: `You help ${NAME}`, messages: [{ role: "user", content: `my IBAN is ${IBAN}` }] },
    never_sent: [IBAN]
  },
  { name: "count_tokens: metadata is not part of the route and is refused", route: "messages.count_tokens", body: { model: "m", messages: [{ role: "user", content: "hi" }], metadata: { user_id: EMAIL } } },
  // embeddings
  {
    name: "embeddings: string inputs are tokenised, user is aliased",
    route: "embeddings",
    body: { model: "e", input: [`contact ${EMAIL}`, `call ${PHONE}`, `again ${EMAIL}`], user: EMAIL, encoding_format: "float" },
    never_sent: [EMAIL, PHONE]
  },
  { name: "embeddings: token arrays pass", route: "embeddings", body: { model: "e", input: [[1, 2, 3], [4]] } },
  { name: "embeddings: an object input is refused (a JSON type the policy does not list)", route: "embeddings", body: { model: "e", input: { text: EMAIL } } },
  // responses
  {
    name: "responses: instructions, message items, function_call arguments and outputs are tokenised; user and metadata aliased",
    route: "responses",
    body: {
      model: "m",
      instructions: `Escalate to ${EMAIL}`,
      input: [
        { role: "user", content: `My number is ${PHONE}` },
        { type: "message", role: "user", content: [{ type: "input_text", text: `IBAN ${IBAN}` }] },
        { type: "function_call", call_id: "c", name: "lookup", arguments: JSON.stringify({ email: EMAIL }) },
        { type: "function_call_output", call_id: "c", output: `found ${EMAIL}` },
        { type: "reasoning", id: "r1", summary: [{ type: "summary_text", text: `user ${NAME} asked` }] },
        { type: "item_reference", id: "msg_1" }
      ],
      user: EMAIL,
      metadata: { account: NAME }
    },
    never_sent: [EMAIL, PHONE, IBAN]
  },
  {
    name: "responses: an input_image in an item without type (a message) is refused by default",
    route: "responses",
    body: { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: PNG_DATA_URL, detail: "auto" }] }] }
  },
  { name: "responses: an item type the policy refuses (mcp_call) is refused", route: "responses", body: { model: "m", input: [{ type: "mcp_call", id: "x", name: "t", server_label: "s", arguments: "{}" }] } },
  { name: "responses: prompt (a stored prompt with variables) is refused", route: "responses", body: { model: "m", input: "hi", prompt: { id: "pmpt_1", variables: { who: EMAIL } } } },
  {
    name: "responses: a string input is tokenised",
    route: "responses",
    body: { model: "m", input: `Reply to ${EMAIL}`, stream: true },
    never_sent: [EMAIL]
  }
]

export const buildEgressPolicyCases = async () => {
  const cases = []
  for (const input of CASES) {
    const options = {
      names: "off",
      secret_hex: REQUEST_SECRET_HEX,
      identifier_secret_hex: IDENTIFIER_SECRET_HEX,
      media_policy: input.media_policy ?? "refuse",
      passthrough_paths: [...(input.passthrough_paths ?? [])]
    }
    let expected: Record<string, unknown>
    try {
      const out = await tokeniseRequest(input.route, input.body, {
        names: "off",
        secret: hexToBytes(REQUEST_SECRET_HEX),
        identifierSecret: hexToBytes(IDENTIFIER_SECRET_HEX),
        mediaPolicy: options.media_policy,
        passthroughPaths: options.passthrough_paths
      })
      const bodyJcs = new TextDecoder().decode(out.bodyBytes)
      for (const value of input.never_sent ?? []) {
        if (bodyJcs.includes(value)) throw new Error(`egress-policy-cases: ${input.name}: ${value} would be sent`)
      }
      expected = { body_jcs: bodyJcs, passthrough: out.passthrough, detectors_fired: out.detectorsFired, map: [...out.map] }
    } catch (error) {
      if (!(error instanceof EgressRefusal)) throw error
      expected = { refusal: { code: error.code, path: error.path, ...(error.kind === undefined ? {} : { kind: error.kind }) } }
    }
    cases.push({ name: input.name, route: input.route, body: input.body, options, ...(input.never_sent === undefined ? {} : { never_sent: input.never_sent }), expected })
  }
  return {
    description:
      "The egress policy (egress-policy.json; README 'Egress policy') applied by the reference engine. For each case: walk `body` for `route` with `options` (names off; `secret_hex`: the per-request alias secret, so `<TYPE_N_tag>` aliases are fixed; `identifier_secret_hex`: the device alias secret of `USER_<tag>` aliases; `media_policy`: refuse | pass | redact with no image redactor; `passthrough_paths`). Expect either `expected.refusal` ({code, path, kind?}: unsupported_field 400, unsupported_content 415, nesting_too_deep 400; nothing may be sent) or the request to send: `body_jcs` (the exact body bytes as UTF-8 text, RFC 8785), `passthrough` (what an opt-in let through untokenised: [{path, kind}] sorted by path, the attestation's `passthrough` claim; [] means the claim is absent), `detectors_fired` (categories and counts, USER for end-user identifiers) and `map` ([alias, original] in order of creation; USER_ aliases are not in it). `never_sent`: values the body must not contain. Refusal precedence: nesting first, then the walk's first refused member or variant in document order, then media in document order. No body has integer-like member names (ECMAScript orders those first).",
    version: 1,
    max_depth: MAX_EGRESS_DEPTH,
    cases
  }
}
