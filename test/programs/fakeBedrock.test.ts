import { request } from "undici"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { FAKE_BEDROCK_API_KEY, FAKE_BEDROCK_CREDENTIALS } from "../../programs/fakeBedrock.ts"
import { fakePromptTokens, type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { signBedrockRequest } from "../../src/providers/bedrock/sigv4.ts"
import { converseUrl } from "../../src/relay/translate/converse/converseTranslation.ts"
import { createEventStreamReader } from "../../src/relay/translate/converse/eventStreamReader.ts"

let provider: FakeProvider
beforeAll(async () => {
  provider = await startFakeProvider({ port: 0 })
})
afterAll(async () => {
  await provider.close()
})
afterEach(() => provider.reset())

const MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
const credentials = { ...FAKE_BEDROCK_CREDENTIALS[0]!, region: "us-east-1" }
const BODY = { messages: [{ role: "user", content: [{ text: "Hi <PERSON_1>" }] }], inferenceConfig: { maxTokens: 20 } }

const send = async (
  options: {
    readonly stream?: boolean
    readonly body?: Uint8Array
    readonly signBody?: Uint8Array
    readonly creds?: typeof credentials
    readonly now?: Date
    readonly extra?: Record<string, string>
  } = {}
) => {
  const url = converseUrl(provider.url, MODEL, options.stream === true)
  const body = options.body ?? Buffer.from(JSON.stringify(BODY))
  const signedHeaders = { "content-type": "application/json", accept: options.stream === true ? "application/vnd.amazon.eventstream" : "application/json" }
  const signature = await signBedrockRequest({
    url,
    signedHeaders,
    body: options.signBody ?? body,
    credentials: options.creds ?? credentials,
    ...(options.now === undefined ? {} : { now: options.now })
  })
  const res = await request(url, { method: "POST", headers: { ...signedHeaders, ...signature, ...options.extra }, body })
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()), signature }
}

describe("fake Bedrock: SigV4 is verified by signing again", () => {
  it("answers a request signed with a known key (path with the model id encoded once, signed twice-encoded)", async () => {
    const res = await send()
    expect(res.signature.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/)
    expect(res.status).toBe(200)
    const answer = JSON.parse(res.bytes.toString())
    expect(answer.output.message.content).toEqual([{ text: "Echo: Hi <PERSON_1>" }])
    expect(answer.stopReason).toBe("end_turn")
    expect(answer.usage.inputTokens).toBe(fakePromptTokens(Buffer.byteLength(JSON.stringify(BODY))))
    expect(res.headers["x-amzn-requestid"]).toMatch(/^fake-bedrock-\d+$/)
    expect(provider.received[0]!.path).toBe("/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse")
  })

  it("refuses a body changed after signing, a wrong secret, an unknown key, a stale date and a false payload hash", async () => {
    const other = Buffer.from(JSON.stringify({ ...BODY, inferenceConfig: { maxTokens: 21 } }))
    const changed = await send({ body: other, signBody: Buffer.from(JSON.stringify(BODY)) })
    expect(changed.status).toBe(403)
    expect(changed.headers["x-amzn-errortype"]).toBe("InvalidSignatureException")

    const wrongSecret = await send({ creds: { ...credentials, secretAccessKey: `${credentials.secretAccessKey}x` } })
    expect([wrongSecret.status, wrongSecret.headers["x-amzn-errortype"]]).toEqual([403, "InvalidSignatureException"])

    const unknown = await send({ creds: { ...credentials, accessKeyId: "AKIAUNKNOWN000000000" } })
    expect([unknown.status, unknown.headers["x-amzn-errortype"]]).toEqual([403, "UnrecognizedClientException"])

    const stale = await send({ now: new Date(Date.now() - 10 * 60_000) })
    expect([stale.status, stale.headers["x-amzn-errortype"]]).toEqual([403, "InvalidSignatureException"])

    // The signer trusts x-amz-content-sha256 as the payload hash; a verifier that did not check it would accept this.
    const body = Buffer.from(JSON.stringify(BODY))
    const url = converseUrl(provider.url, MODEL, false)
    const forged = await signBedrockRequest({
      url,
      signedHeaders: { "content-type": "application/json", "x-amz-content-sha256": "0".repeat(64) },
      body,
      credentials
    })
    const res = await request(url, { method: "POST", headers: { "content-type": "application/json", "x-amz-content-sha256": "0".repeat(64), ...forged }, body })
    await res.body.dump()
    expect(res.statusCode).toBe(403)

    const none = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body })
    await none.body.dump()
    expect(none.statusCode).toBe(403)
  })

  it("takes a session token (signed as x-amz-security-token) and a Bedrock API key as Bearer token", async () => {
    const withToken = await send({ creds: { ...credentials, sessionToken: "FQoGZXIvYXdzEBYaDFAKE" } })
    expect(withToken.signature["x-amz-security-token"]).toBe("FQoGZXIvYXdzEBYaDFAKE")
    expect(withToken.signature.authorization).toContain("x-amz-security-token")
    expect(withToken.status).toBe(200)

    const url = converseUrl(provider.url, MODEL, false)
    const bearer = await request(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${FAKE_BEDROCK_API_KEY}` }, body: JSON.stringify(BODY) })
    await bearer.body.dump()
    expect(bearer.statusCode).toBe(200)
  })

  it("streams real event-stream frames (CRC-checked by the decoder), metadata last; bad-frame corrupts one", async () => {
    const res = await send({ stream: true })
    expect(res.status).toBe(200)
    expect(res.headers["content-type"]).toBe("application/vnd.amazon.eventstream")
    const messages = [...createEventStreamReader().push(res.bytes)]
    expect(messages.map((m) => m.type)).toEqual(["messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"])
    const text = messages.filter((m) => m.type === "contentBlockDelta").map((m) => JSON.parse(Buffer.from(m.payload).toString()).delta.text).join("")
    expect(text).toBe("Echo: Hi <PERSON_1>")

    provider.setBehaviour({ kind: "bad-frame", afterChunks: 2 })
    const bad = await send({ stream: true })
    const reader = createEventStreamReader()
    expect(() => [...reader.push(bad.bytes)]).toThrow(/checksum/)
  })

  it("answers an injected failure the way Bedrock does: status, {message} and x-amzn-errortype", async () => {
    provider.setBehaviour({ kind: "status", status: 429 })
    const res = await send()
    expect(res.status).toBe(429)
    expect(res.headers["x-amzn-errortype"]).toBe("ThrottlingException")
    expect(JSON.parse(res.bytes.toString())).toEqual({ message: "fake provider injected status 429" })
  })
})
