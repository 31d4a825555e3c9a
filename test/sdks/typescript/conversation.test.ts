// client.conversations (sdks/typescript/src/conversation.ts, issue 34 item 2): a multi-turn Responses conversation
// whose history and aliases stay on the device, against a real gateway and the fake provider. The provider never sees
// an original, a value keeps its alias across turns (the earlier turns go upstream as the same bytes), the answers
// come back restored, and a refused, failed or cut turn leaves the history as it was.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, beforeEach, describe, expect, it } from "vitest"
import { fakeReplyText } from "../../../programs/fake-provider.ts"
import { ConflictError, InvalidRequestError, RelayClient, StreamError } from "../../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture({}, { streamPieceChars: 3 })

const EMAIL = "jane.doe@example.com"
const FIRST = `My address is ${EMAIL}.`
const SECOND = `Send the invoice to ${EMAIL} today.`

let deviceKey: CryptoKeyPair
beforeAll(async () => {
  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-sdk-config-"))
  deviceKey = await generateSigningKeyPair()
})
beforeEach(() => fx.provider.reset())

const client = async () => {
  const { apiKey } = await fundedKey(fx.gw)
  return new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey })
}

const outputText = (response: any): string =>
  (response.output as Array<any>).flatMap((item) => (item.type === "message" ? item.content : [])).filter((c: any) => c.type === "output_text").map((c: any) => c.text).join("")

const upstreamBodies = () => fx.provider.received.map((r) => JSON.parse(r.body.toString("utf8")))

describe("client.conversations", () => {
  it("JSON turns: history resent with the same aliases, nothing original upstream, answers restored, no server state asked for", async () => {
    const conversation = (await client()).conversations.create()
    const first = await conversation.responses.create({ model: "local-chat", input: FIRST })
    expect(outputText(first)).toBe(fakeReplyText(FIRST))
    const second = await conversation.responses.create({ model: "local-chat", input: SECOND })
    expect(outputText(second)).toBe(fakeReplyText(SECOND))
    expect(second.receiptVerified).toBe(true)

    const [turn1, turn2] = upstreamBodies()
    const raw = fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")
    expect(raw).not.toContain(EMAIL)
    expect(turn2.previous_response_id).toBeUndefined()
    // Turn 2 starts with turn 1's input and the model's answer to it, byte for byte as turn 1 sent them.
    expect(turn2.input).toHaveLength(3)
    expect(JSON.stringify(turn2.input[0])).toBe(JSON.stringify(turn1.input[0]))
    expect(turn2.input[1]).toMatchObject({ type: "message", role: "assistant" })
    const alias = /<EMAIL_1_[0-9a-z]+>/.exec(JSON.stringify(turn1.input))![0]
    expect(JSON.stringify(turn2.input[1])).toContain(alias)
    expect(turn2.input[2].content).toBe(`Send the invoice to ${alias} today.`)

    // On the device: every turn as originals, one alias for the one e-mail.
    expect(conversation.items.map((i) => i.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(outputText({ output: [conversation.items[1]] })).toBe(fakeReplyText(FIRST))
    expect([...conversation.aliases]).toEqual([[alias, EMAIL]])
  })

  it("streamed turn: events restored as they stream; the completed output joins the history once the stream ends", async () => {
    const conversation = (await client()).conversations.create()
    const stream = await conversation.responses.create({ model: "local-chat", input: FIRST, stream: true })
    let text = ""
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta
    expect(text).toBe(fakeReplyText(FIRST))
    expect(stream.receiptVerified).toBe(true)
    expect(conversation.items).toHaveLength(2)
    const next = await conversation.responses.create({ model: "local-chat", input: SECOND })
    expect(outputText(next)).toBe(fakeReplyText(SECOND))
    expect(fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")).not.toContain(EMAIL)
  })

  it("previous_response_id or conversation: refused before anything is sent, history unchanged", async () => {
    const conversation = (await client()).conversations.create()
    for (const field of ["previous_response_id", "conversation"]) {
      const refused = await conversation.responses.create({ model: "local-chat", input: FIRST, [field]: "resp_1" }).catch((e) => e)
      expect(refused).toBeInstanceOf(InvalidRequestError)
      expect(refused).toMatchObject({ code: "invalid_request", body: { details: { path: field } } })
    }
    const noInput = await conversation.responses.create({ model: "local-chat" }).catch((e) => e)
    expect(noInput).toMatchObject({ code: "invalid_request", body: { details: { path: "input" } } })
    expect(fx.provider.received).toHaveLength(0)
    expect(conversation.items).toHaveLength(0)
  })

  it("a second turn while a streamed one is unread is refused (conversation_busy); a cut stream or a failed call leaves the history as it was", async () => {
    const conversation = (await client()).conversations.create()
    const open = await conversation.responses.create({ model: "local-chat", input: FIRST, stream: true })
    const busy = await conversation.responses.create({ model: "local-chat", input: SECOND }).catch((e) => e)
    expect(busy).toBeInstanceOf(ConflictError)
    expect(busy.code).toBe("conversation_busy")
    expect(fx.provider.received).toHaveLength(1)
    for await (const _ of open);
    expect(conversation.items).toHaveLength(2)

    fx.provider.setBehaviour({ kind: "cut-stream", afterChunks: 4 })
    const cut = await conversation.responses.create({ model: "local-chat", input: SECOND, stream: true })
    const broken = await (async () => {
      for await (const _ of cut);
    })().catch((e) => e)
    expect(broken).toBeInstanceOf(StreamError)
    expect(conversation.items).toHaveLength(2)

    fx.provider.setBehaviour({ kind: "status", status: 400 })
    const failed = await conversation.responses.create({ model: "local-chat", input: SECOND }).catch((e) => e)
    expect(failed.status).toBeGreaterThanOrEqual(400)
    expect(conversation.items).toHaveLength(2)

    fx.provider.setBehaviour({ kind: "normal" })
    const after = await conversation.responses.create({ model: "local-chat", input: SECOND })
    expect(outputText(after)).toBe(fakeReplyText(SECOND))
    expect(conversation.items).toHaveLength(4)
  })
})
