// MEDIA_POLICY=redact through the local proxy (issue 31 item 4): an image with an e-mail written in it reaches the
// provider with the address painted over (the same on-device OCR finds no e-mail in what the provider received), and
// the v3 attestation declares `image-redacted` at the part's path. A corrupt image and a 20 MB image are refused with
// nothing sent.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { FakeProvider } from "../../../../programs/fake-provider.ts"
import { createOcr } from "../../../../sdks/typescript/src/ocr/onDeviceOcr.ts"
import { detectStructured } from "../../../../sdks/typescript/src/tokeniser/detectStructured.ts"
import { decodeAttestationHeader, verifyV3Signature, type V3Envelope } from "../../../../sdks/typescript/src/wire/attestation/v3.ts"
import type { StartedProxy } from "../../../../sdks/typescript/src/proxy/startProxy.ts"
import { startProxyFixture, type ProxyFixture } from "../../../support/proxyFixture.ts"

const EMAIL_PNG = readFileSync(join(import.meta.dirname, "../../../fixtures/images/email.png"))

let fx: ProxyFixture
let provider: FakeProvider
let proxy: StartedProxy
const ocr = createOcr({ timeoutMs: 60_000, idleMs: 1_000 })

/** The attestation header of every relayed call (the egress seen from the device). */
const attestations = () => fx.egress.flatMap((e) => e.headers.get("x-service-attestation") ?? [])

beforeAll(async () => {
  fx = await startProxyFixture({ name: "proxy-redact", proxyEnv: { MEDIA_POLICY: "redact" } })
  ;({ provider, proxy } = fx)
}, 60_000)
afterAll(async () => {
  await fx?.close()
  await ocr.close()
})
beforeEach(() => fx.reset())

const chat = (imageUrl: string) =>
  fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "local-chat",
      messages: [{ role: "user", content: [{ type: "text", text: "What does this say?" }, { type: "image_url", image_url: { url: imageUrl } }] }]
    })
  })

const DATA_URL = /^data:(image\/[a-z]+);base64,(.+)$/

describe("local proxy, MEDIA_POLICY=redact", () => {
  it("the provider gets the image with the e-mail painted over, and the attestation declares image-redacted", async () => {
    const res = await chat(`data:image/png;base64,${EMAIL_PNG.toString("base64")}`)
    expect(res.status, await res.clone().text()).toBe(200)
    expect(provider.received).toHaveLength(1)
    const upstream = JSON.parse(provider.received[0]!.body.toString("utf8"))
    const url: string = upstream.messages[0].content[1].image_url.url
    const [, mediaType, data] = DATA_URL.exec(url)!
    expect(mediaType).toBe("image/png")
    const received = new Uint8Array(Buffer.from(data!, "base64"))
    expect(Buffer.from(received).equals(EMAIL_PNG)).toBe(false)
    // The same OCR on what the provider received: no e-mail (and the original does show one).
    expect(detectStructured((await ocr.recognise(new Uint8Array(EMAIL_PNG))).text).map((s) => s.type)).toContain("EMAIL")
    const seen = (await ocr.recognise(received)).text
    expect(detectStructured(seen)).toEqual([])
    expect(seen).not.toMatch(/@|lovelace/i)
    expect(seen).toContain("Tuesday")

    expect(attestations()).toHaveLength(1)
    const envelope = decodeAttestationHeader(attestations()[0]!) as V3Envelope
    expect(await verifyV3Signature(envelope)).toBe(true)
    expect(envelope.claims["v3-attestation"].passthrough).toEqual([{ path: "/messages/0/content/1", kind: "image-redacted" }])
  }, 60_000)

  it("a corrupt image is refused (unsupported_content at its path) and nothing is sent", async () => {
    const corrupt = Buffer.concat([EMAIL_PNG.subarray(0, 40), Buffer.alloc(4000, 7)])
    const res = await chat(`data:image/png;base64,${corrupt.toString("base64")}`)
    expect(res.status).toBe(415)
    const answer = (await res.json()) as { error: { code: string; message: string; details?: Record<string, string> } }
    expect(answer.error.code).toBe("unsupported_content")
    expect(answer.error.message).toMatch(/^The image at \/messages\/0\/content\/1 is not sent: it is a damaged PNG image/)
    expect(provider.received).toHaveLength(0)
    expect(attestations()).toHaveLength(0)
  })

  // The proxy's request body limit (8 MiB) answers first, before a byte of the body is read; the redactor's own 20 MiB
  // limit is tested through the engine (test/sdks/typescript/ocr/redactImage.test.ts), where no body limit applies.
  it("a 20 MB image is refused (413) and nothing is sent", async () => {
    const big = Buffer.alloc(20 * 1024 * 1024 + 1)
    EMAIL_PNG.copy(big)
    const res = await chat(`data:image/png;base64,${big.toString("base64")}`)
    expect(res.status).toBe(413)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large")
    expect(provider.received).toHaveLength(0)
    expect(attestations()).toHaveLength(0)
  })
})
