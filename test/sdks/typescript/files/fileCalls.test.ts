// Files in private calls: OpenAI `file` parts and Anthropic `document` blocks are read and tokenised on the device,
// through the SDK (create and client.fetch with the official SDKs) and the local proxy. The provider (and the
// gateway) never see an original value; a file that cannot be read refuses the call with a clear 4xx and nothing
// is sent.
import Anthropic from "@anthropic-ai/sdk"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { FileError, RelayClient } from "../../../../sdks/typescript/src/index.ts"
import { startProxy, type StartedProxy } from "../../../../sdks/typescript/src/proxy/startProxy.ts"
import { generateSigningKeyPair } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../../support/relayFixture.ts"
import { fundedKey } from "../../../support/tenant.ts"
import { makeDocx, makeEncryptedOffice, makePdf, makePptx, makeXlsx, ORIGINALS } from "./fixtures.ts"

const fx = useRelayFixture()

const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")
const dataUrl = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${base64(bytes)}`

let docx: Uint8Array
let xlsx: Uint8Array
let relay: RelayClient
/** POSTs the client sent to the gateway. */
let posts: Array<string>
let proxy: StartedProxy
let dir: string

beforeAll(async () => {
  docx = await makeDocx()
  xlsx = await makeXlsx()
  dir = mkdtempSync(join(tmpdir(), "pr-files-"))
  process.env.PRIVACY_RELAY_CONFIG_DIR = join(dir, "sdk-config")
  const { apiKey } = await fundedKey(fx.gw)
  const recording: typeof fetch = async (input, init) => {
    if ((init?.method ?? "GET") === "POST") posts.push(String(input))
    return fetch(input, init)
  }
  relay = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "builtin", deviceKey: await generateSigningKeyPair(), fetch: recording, fileLimits: { maxBytes: 200_000 } })
  const keyFile = join(dir, "gateway-key")
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 })
  chmodSync(keyFile, 0o600)
  proxy = await startProxy({
    PROXY_HOST: "127.0.0.1",
    PROXY_PORT: "0",
    GATEWAY_URL: fx.gw.url,
    GATEWAY_KEY_FILE: keyFile,
    PRIVACY_RELAY_CONFIG_DIR: join(dir, "proxy-config"),
    NAME_MODEL: "builtin",
    PROXY_FILE_MAX_BYTES: "200000"
  })
})
afterAll(async () => {
  await proxy?.close()
  rmSync(dir, { recursive: true, force: true })
})
beforeEach(() => {
  posts = []
})

const providerSaw = () => fx.provider.received.map((r) => r.body.toString("utf8")).join("\n")

/** The provider got exactly `calls` requests and no original value of the fixtures in any of them. */
const expectTokenisedUpstream = (calls: number, header: string) => {
  expect(fx.provider.received).toHaveLength(calls)
  const seen = providerSaw()
  for (const [field, value] of Object.entries(ORIGINALS)) expect(seen, `${field} reached the provider`).not.toContain(value)
  expect(seen).toContain(`--- File: ${header} ---`)
  expect(seen).toMatch(/<EMAIL_1_[0-9a-z]+>/)
}

const expectNothingSent = () => {
  expect(fx.provider.received).toHaveLength(0)
  expect(posts).toEqual([])
}

describe("files through the SDK", () => {
  it("chat.completions.create: a .docx file part is sent as its tokenised text; the answer has the originals back", async () => {
    const answer = await relay.chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: [{ type: "text", text: "Summarise this." }, { type: "file", file: { filename: "report.docx", file_data: dataUrl(DOCX, docx) } }] }]
    })
    expectTokenisedUpstream(1, "report.docx")
    // The fake provider echoes the text it got: restored on the device, every original is back.
    const content = answer.choices[0].message.content as string
    for (const value of [ORIGINALS.bodyName, ORIGINALS.email, ORIGINALS.tableEmail, ORIGINALS.headerEmail, ORIGINALS.footerPhone, ORIGINALS.commentEmail]) expect(content).toContain(value)
    expect(JSON.stringify(answer.tokenisedRequest)).not.toContain(ORIGINALS.email)
    expect(answer.receiptVerified).toBe(true)
  })

  it("client.fetch with the official openai SDK: an .xlsx file part", async () => {
    const openai = new OpenAI({ apiKey: "unused", fetch: relay.fetch, maxRetries: 0 })
    const completion = await openai.chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: [{ type: "file", file: { filename: "people.xlsx", file_data: dataUrl(XLSX, xlsx) } }] }]
    })
    expectTokenisedUpstream(1, "people.xlsx")
    expect(completion.choices[0].message.content).toContain(`| 2 | ${ORIGINALS.cellName} | ${ORIGINALS.cellEmail} | ${ORIGINALS.cellPhone} | 120 |`)
  })

  it("client.fetch with the official Anthropic SDK: base64 PDF and plain-text document blocks", async () => {
    const anthropic = new Anthropic({ apiKey: "unused", fetch: relay.fetch, maxRetries: 0 })
    const message = await anthropic.messages.create({
      model: "local-chat",
      max_tokens: 256,
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: base64(makePdf([`Written by ${ORIGINALS.pdfEmail}`])) }, title: "memo.pdf" },
            { type: "document", source: { type: "text", media_type: "text/plain", data: `Call ${ORIGINALS.phone}, mail ${ORIGINALS.email}` }, title: "note" },
            { type: "text", text: "Compare them." }
          ]
        }
      ]
    })
    expectTokenisedUpstream(1, "memo.pdf")
    expect(providerSaw()).toContain("--- File: note ---")
    expect(message.content[0]).toMatchObject({ type: "text" })
    const text = (message.content[0] as { text: string }).text
    expect(text).toContain(ORIGINALS.pdfEmail)
    expect(text).toContain(ORIGINALS.phone)
  })

  it("refusals answer 4xx with the code and send nothing: unsupported type 415, too large 413, file_id 400, encrypted 422, URL source 400", async () => {
    const openai = new OpenAI({ apiKey: "unused", fetch: relay.fetch, maxRetries: 0 })
    const send = (file: Record<string, string>) =>
      openai.chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: [{ type: "file", file }] }] }).then(
        () => {
          throw new Error("expected a refusal")
        },
        (error: InstanceType<typeof OpenAI.APIError>) => ({ status: error.status, code: (error.error as { code?: string }).code })
      )
    expect(await send({ filename: "photo.png", file_data: dataUrl("image/png", new Uint8Array(10)) })).toEqual({ status: 415, code: "file_unsupported_type" })
    expect(await send({ filename: "big.txt", file_data: dataUrl("text/plain", new Uint8Array(300_000).fill(65)) })).toEqual({ status: 413, code: "file_too_large" })
    expect(await send({ file_id: "file-abc123" })).toEqual({ status: 400, code: "file_reference_unsupported" })
    expect(await send({ filename: "locked.docx", file_data: dataUrl(DOCX, makeEncryptedOffice()) })).toEqual({ status: 422, code: "file_encrypted" })
    const anthropic = new Anthropic({ apiKey: "unused", fetch: relay.fetch, maxRetries: 0 })
    const refused = await anthropic.messages
      .create({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: [{ type: "document", source: { type: "url", url: "https://example.org/a.pdf" } }] }] })
      .catch((error: InstanceType<typeof Anthropic.APIError>) => error)
    expect(refused).toBeInstanceOf(Anthropic.APIError)
    expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(400)
    expect(JSON.stringify((refused as InstanceType<typeof Anthropic.APIError>).error)).toContain("file_reference_unsupported")
    // The Promise face throws the FileError itself.
    const direct = await relay.chat.completions
      .create({ model: "local-chat", messages: [{ role: "user", content: [{ type: "file", file: { filename: "x.docx", file_data: "bm90IGEgemlw" } }] }] })
      .catch((error: unknown) => error)
    expect(direct).toBeInstanceOf(FileError)
    expect((direct as FileError).code).toBe("file_malformed")
    expectNothingSent()
  })
})

describe("files through the local proxy", () => {
  it("the official openai SDK pointed at the proxy: a .pptx file part leaves as tokenised text, the answer has the originals", async () => {
    const openai = new OpenAI({ apiKey: "unused", baseURL: `${proxy.url}/v1`, maxRetries: 0 })
    const completion = await openai.chat.completions.create({
      model: "local-chat",
      messages: [{ role: "user", content: [{ type: "file", file: { filename: "deck.pptx", file_data: dataUrl("application/octet-stream", makePptx()) } }] }]
    })
    expect(fx.provider.received).toHaveLength(1)
    expect(providerSaw()).not.toContain(ORIGINALS.slideEmail)
    expect(providerSaw()).not.toContain(ORIGINALS.notesPhone)
    expect(providerSaw()).not.toContain(ORIGINALS.tableName)
    expect(providerSaw()).toContain("--- File: deck.pptx ---")
    expect(completion.choices[0].message.content).toContain(ORIGINALS.slideEmail)
    expect(completion.choices[0].message.content).toContain(ORIGINALS.notesPhone)
  })

  it("the official Anthropic SDK at the proxy: a .docx document block; refusals 415/413/422 with nothing forwarded", async () => {
    const anthropic = new Anthropic({ apiKey: "unused", baseURL: proxy.url, maxRetries: 0 })
    const message = await anthropic.messages.create({
      model: "local-chat",
      max_tokens: 256,
      // The Anthropic SDK types document blocks as PDF or text; the proxy reads any type it knows.
      messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: DOCX, data: base64(docx) } } as never] }]
    })
    expectTokenisedUpstream(1, "document.docx")
    expect((message.content[0] as { text: string }).text).toContain(ORIGINALS.iban)
    fx.provider.reset()
    const refuse = (source: Record<string, string>) =>
      anthropic.messages
        .create({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: [{ type: "document", source } as never] }] })
        .then(
          () => {
            throw new Error("expected a refusal")
          },
          // The proxy answers Anthropic's error shape with its own code beside the type.
          (error: InstanceType<typeof Anthropic.APIError>) => ({ status: error.status, code: (error.error as { error?: { code?: string } }).error?.code })
        )
    expect(await refuse({ type: "base64", media_type: "image/png", data: "AAAA" })).toEqual({ status: 415, code: "file_unsupported_type" })
    expect(await refuse({ type: "base64", media_type: "text/plain", data: base64(new Uint8Array(300_000).fill(65)) })).toEqual({ status: 413, code: "file_too_large" })
    expect(await refuse({ type: "base64", media_type: DOCX, data: base64(makeEncryptedOffice()) })).toEqual({ status: 422, code: "file_encrypted" })
    expect(fx.provider.received).toHaveLength(0)
  })
})
