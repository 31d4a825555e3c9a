// The unmodified official SDKs (openai, @anthropic-ai/sdk) with `client.fetch` of @privacy-relay/sdk as their fetch:
// no proxy running, yet every request is tokenised and attested on this device and every answer (streams too) comes
// back with the originals. The fake provider sees only aliases.
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { RelayClient } from "../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { fundedKey } from "../support/tenant.ts"

const fx = useRelayFixture({}, { streamPieceChars: 4 })

const EMAIL = "maria.lopez@example.org"
const IBAN = "GB82 WEST 1234 5698 7654 32"
const PROMPT = `Refund ${EMAIL}, IBAN ${IBAN}, today.`

let relay: RelayClient
beforeAll(async () => {
  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-sdk-config-"))
  const { apiKey } = await fundedKey(fx.gw)
  relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey: await generateSigningKeyPair() })
})

// The official SDKs' own key and base URL are placeholders: client.fetch sends to the relay's gateway with its key.
const openai = () => new OpenAI({ apiKey: "unused", baseURL: "https://relay.invalid/v1", fetch: relay.fetch, maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey: "unused", baseURL: "https://relay.invalid", fetch: relay.fetch, maxRetries: 0 })

const upstreamBodies = () => fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
const expectOnlyAliasesUpstream = () => {
  const seen = upstreamBodies()
  expect(seen).not.toContain(EMAIL)
  expect(seen).not.toContain("WEST")
  expect(seen).toMatch(/<IBAN_[0-9A-Za-z_]+>/)
}

describe("official SDKs with client.fetch", () => {
  it("openai: non-streamed chat completion", async () => {
    fx.provider.reset()
    const completion = await openai().chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: PROMPT }] })
    expect(completion.choices[0].message.content).toBe(`Echo: ${PROMPT}`)
    expectOnlyAliasesUpstream()
  })

  it("openai: streamed chat completion (aliases cut across frames)", async () => {
    fx.provider.reset()
    const stream = await openai().chat.completions.create({ model: "local-chat", stream: true, messages: [{ role: "user", content: PROMPT }] })
    let text = ""
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ""
    expect(text).toBe(`Echo: ${PROMPT}`)
    expectOnlyAliasesUpstream()
  })

  it("openai: embeddings and the model list", async () => {
    fx.provider.reset()
    const embedding = await openai().embeddings.create({ model: "local-embed", input: PROMPT })
    expect(embedding.data[0].embedding.length).toBeGreaterThan(0)
    expectOnlyAliasesUpstream()
    const models = await openai().models.list()
    expect(models.data.map((m) => m.id)).toContain("local-chat")
  })

  it("anthropic: non-streamed and streamed messages", async () => {
    fx.provider.reset()
    const message = await anthropic().messages.create({ model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: PROMPT }] })
    expect(message.content[0].type === "text" && message.content[0].text).toContain(EMAIL)
    const stream = anthropic().messages.stream({ model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: PROMPT }] })
    let text = ""
    stream.on("text", (delta) => (text += delta))
    const final = await stream.finalMessage()
    expect(text).toContain(`${EMAIL}, IBAN ${IBAN}`)
    expect(final.content[0].type === "text" && final.content[0].text).toContain(IBAN)
    expectOnlyAliasesUpstream()
  })

  it("errors reach the official SDKs in their own shape (Anthropic's error object for anthropic), nothing forwarded", async () => {
    fx.provider.reset()
    const anthropicError = await anthropic().messages.create({ model: "no-such-model", max_tokens: 8, messages: [{ role: "user", content: "x" }] }).catch((e) => e)
    expect(anthropicError).toBeInstanceOf(Anthropic.NotFoundError)
    // The Anthropic SDK prints its error object; ours is in Anthropic's shape: Anthropic's type for the status, our
    // stable code beside it (as the local proxy answers), and a message.
    expect(anthropicError.error).toMatchObject({ type: "error", error: { type: "not_found_error", code: "model_not_found", message: expect.stringContaining("not in the catalogue") } })
    expect(anthropicError.type).toBe("not_found_error")
    const openaiError = await openai().chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }).catch((e) => e)
    expect(openaiError).toBeInstanceOf(OpenAI.NotFoundError)
    expect(openaiError.code).toBe("model_not_found")
    expect(openaiError.type).toBeUndefined() // the gateway's envelope: the code is in `code`, not also in `type`
    expect(fx.provider.received).toHaveLength(0)
  })
})
