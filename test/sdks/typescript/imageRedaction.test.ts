// The SDK on Node with MEDIA_POLICY=redact: RelayClient({ mediaPolicy: "redact", redactImage: createImageRedactor() })
// from the package's Node entry sends the image with the e-mail painted over and declares it; the browser entry does
// not reach the redactor (OCR, codecs) at all.
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as esbuild from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { engineIdentityPlugin, packageEngine } from "../../../sdks/typescript/browserBundle.ts"
import { createImageRedactor, RelayClient } from "../../../sdks/typescript/src/index.ts"
import * as browserEntry from "../../../sdks/typescript/src/browser.ts"
import { createOcr } from "../../../sdks/typescript/src/ocr/onDeviceOcr.ts"
import { detectStructured } from "../../../sdks/typescript/src/tokeniser/detectStructured.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()
const EMAIL_PNG = readFileSync(join(import.meta.dirname, "../../fixtures/images/email.png"))
const redactImage = createImageRedactor({ names: "off" })
const ocr = createOcr({ timeoutMs: 60_000, idleMs: 1_000 })
let deviceKey: CryptoKeyPair

beforeAll(async () => {
  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-sdk-config-"))
  deviceKey = await generateSigningKeyPair()
})
afterAll(async () => {
  await redactImage.close()
  await ocr.close()
})

const imageBody = (url: string) => ({
  model: "local-chat",
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "What does it say?" }, { type: "image_url" as const, image_url: { url } }] }]
})

describe("RelayClient with mediaPolicy redact (Node)", () => {
  it("the provider receives the image with no e-mail the same OCR can find", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const client = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey, mediaPolicy: "redact", redactImage })
    await client.chat.completions.create(imageBody(`data:image/png;base64,${EMAIL_PNG.toString("base64")}`))
    expect(fx.provider.received).toHaveLength(1)
    const upstream = JSON.parse(fx.provider.received[0]!.body.toString("utf8"))
    const [, mediaType, data] = /^data:(image\/[a-z]+);base64,(.+)$/.exec(upstream.messages[0].content[1].image_url.url)!
    expect(mediaType).toBe("image/png")
    const seen = (await ocr.recognise(new Uint8Array(Buffer.from(data!, "base64")))).text
    expect(detectStructured(seen)).toEqual([])
    expect(seen).toContain("Tuesday")
  }, 60_000)

  it("a corrupt image is refused before anything is sent", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const client = new RelayClient({ gatewayUrl: fx.gw.url, apiKey, nameModel: "off", deviceKey, mediaPolicy: "redact", redactImage })
    const corrupt = Buffer.concat([EMAIL_PNG.subarray(0, 40), Buffer.alloc(500, 7)])
    await expect(client.chat.completions.create(imageBody(`data:image/png;base64,${corrupt.toString("base64")}`))).rejects.toMatchObject({
      code: "unsupported_content"
    })
    expect(fx.provider.received).toHaveLength(0)
  })
})

describe("the browser entry and the image redactor", () => {
  it("createImageRedactor is exported by the Node entry only", () => {
    expect("createImageRedactor" in browserEntry).toBe(false)
  })

  it("the browser bundle holds none of the redactor's modules (OCR, PNG and JPEG codecs)", async () => {
    const result = await esbuild.build({
      entryPoints: [join(import.meta.dirname, "../../../sdks/typescript/src/browser.ts")],
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "browser",
      write: false,
      metafile: true,
      outdir: join(tmpdir(), "pr-browser-metafile"),
      logLevel: "silent",
      plugins: [engineIdentityPlugin(packageEngine())]
    })
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.filter((f) => /src\/ocr\/|node_modules\/(pngjs|jpeg-js|tesseract\.js)/.test(f))).toEqual([])
  })
})
