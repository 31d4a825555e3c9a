// The TypeScript SDK's typed Responses API face (issue 34): client.responses.create against a real gateway and the
// fake provider, JSON and streamed (3-character frames, so aliases are cut across events), and the Effect face.
// The provider sees only aliases, the caller gets the originals, receipts verify offline.
import { Effect } from "effect"
import { mkdtempSync } from "node:fs"
import OpenAI from "openai"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeReplyText } from "../../../programs/fake-provider.ts"
import { EgressRefusedError, RelayClient } from "../../../sdks/typescript/src/index.ts"
import { Relay, responses as responsesEffect, responsesStream } from "../../../sdks/typescript/src/effect.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture({}, { streamPieceChars: 3 })

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const PROMPT = `Email ${EMAIL} or call ${PHONE} about the invoice.`

let deviceKey: CryptoKeyPair
beforeAll(async () => {
  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-sdk-config-"))
  deviceKey = await generateSigningKeyPair()
})
beforeEach(() => fx.provider.reset())

const options = async () => {
  const { apiKey, orgId } = await fundedKey(fx.gw)
  return { options: { gatewayUrl: fx.gw.url, apiKey, nameModel: "off" as const, deviceKey }, orgId }
}

const expectNoOriginalUpstream = () => {
  expect(fx.provider.received.length).toBeGreaterThan(0)
  for (const r of fx.provider.received) expect(r.path).toBe("/v1/responses")
  const seen = fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
  expect(seen).not.toContain(EMAIL)
  expect(seen).not.toContain("7946")
  expect(seen).toMatch(/<EMAIL_1_[0-9a-z]+>/)
}

const outputText = (response: any): string =>
  (response.output as Array<any>).flatMap((item) => (item.type === "message" ? item.content : [])).filter((c: any) => c.type === "output_text").map((c: any) => c.text).join("")

describe("RelayClient: client.responses.create", () => {
  it("JSON: the provider sees aliases, the caller gets the originals, requestId and a verified receipt", async () => {
    const { options: o, orgId } = await options()
    const relay = new RelayClient(o)
    const answer = await relay.responses.create({ model: "local-chat", instructions: `You write to ${EMAIL}.`, input: PROMPT })
    expect(outputText(answer)).toBe(fakeReplyText(PROMPT))
    expect(outputText(answer)).toContain(EMAIL)
    expect(answer.instructions).toBe(`You write to ${EMAIL}.`)
    expectNoOriginalUpstream()
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.receipt).toMatchObject({ v: 2, chain: { chain_id: `receipt-v2-org-${orgId}` } })
    expect(answer.receiptVerified).toBe(true)
    expect(JSON.stringify(answer.tokenisedRequest)).not.toContain(EMAIL)
    expect([...answer.aliases.values()].sort()).toEqual([EMAIL, PHONE].sort())
    expect(Object.keys(JSON.parse(JSON.stringify(answer)))).not.toContain("receipt")
  })

  it("streamed: Responses events with the text restored as it streams (aliases cut across frames), .receipt verified at the end", async () => {
    const { options: o } = await options()
    const relay = new RelayClient(o)
    const stream = await relay.responses.create({ model: "local-chat", input: [{ role: "user", content: PROMPT }], stream: true })
    expect(stream.receipt).toBeUndefined()
    let text = ""
    let doneText = ""
    let completed: any
    const types: Array<string> = []
    const numbers: Array<number> = []
    for await (const event of stream) {
      types.push(event.type)
      numbers.push(event.sequence_number)
      if (event.type === "response.output_text.delta") text += event.delta
      if (event.type === "response.output_text.done") doneText = event.text
      if (event.type === "response.completed") completed = event.response
    }
    expect(types.filter((t) => t === "response.output_text.delta").length).toBeGreaterThan(5)
    expect(text).toBe(fakeReplyText(PROMPT))
    expect(doneText).toBe(fakeReplyText(PROMPT))
    expect(outputText(completed)).toBe(fakeReplyText(PROMPT))
    // The gateway's receipt frame is not an event of the stream; it is .receipt.
    expect(types.at(-1)).toBe("response.completed")
    expect(types).not.toContain("keepalive")
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b))
    expect(new Set(numbers).size).toBe(numbers.length)
    expect(stream.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(stream.receipt).toMatchObject({ v: 2 })
    expect(stream.receiptVerified).toBe(true)
    expectNoOriginalUpstream()
  })

  it("Effect face: responses and responsesStream", async () => {
    const { options: o } = await options()
    const layer = Relay.layer(o)
    const answer = await Effect.runPromise(Effect.provide(responsesEffect({ model: "local-chat", input: PROMPT }), layer))
    expect(outputText(answer)).toBe(fakeReplyText(PROMPT))
    expect(answer.receiptVerified).toBe(true)
    const stream = await Effect.runPromise(Effect.provide(responsesStream({ model: "local-chat", input: PROMPT }), layer))
    let text = ""
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta
    expect(text).toBe(fakeReplyText(PROMPT))
    expect(stream.receiptVerified).toBe(true)
    expectNoOriginalUpstream()
  })

  it("client.fetch: the official openai package's responses.create, JSON and streamed, gets the originals", async () => {
    const { options: o } = await options()
    const relay = new RelayClient(o)
    const openai = new OpenAI({ apiKey: "unused", fetch: relay.fetch, maxRetries: 0 })
    const response = await openai.responses.create({ model: "local-chat", input: PROMPT })
    expect(response.output_text).toBe(fakeReplyText(PROMPT))
    const stream = await openai.responses.create({ model: "local-chat", input: PROMPT, stream: true })
    let text = ""
    const types: Array<string> = []
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === "response.output_text.delta") text += event.delta
    }
    expect(text).toBe(fakeReplyText(PROMPT))
    // The receipt frame reaches the official SDK re-framed as an event type it knows (docs/decisions.md).
    expect(types.at(-1)).toBe("keepalive")
    expectNoOriginalUpstream()
  })

  it("previous_response_id / conversation: refused on the device (EgressRefusedError unsupported_field), nothing sent; client.conversations is the way", async () => {
    const { options: o } = await options()
    const relay = new RelayClient(o)
    for (const field of ["previous_response_id", "conversation"]) {
      const refused = await relay.responses.create({ model: "local-chat", input: PROMPT, [field]: "resp_1" }).catch((e) => e)
      expect(refused).toBeInstanceOf(EgressRefusedError)
      expect(refused).toMatchObject({ status: 0, code: "unsupported_field", body: { details: { path: `/${field}` } } })
    }
    expect(fx.provider.received).toHaveLength(0)
  })
})
