// The SDK in a browser: the browser entry bundled with all its dependencies for a page (sdks/typescript/browserBundle.ts,
// the package build's settings), served with a small chat page from 127.0.0.1, driven in Debian's Chromium through
// playwright-core. The page makes private chat calls, non-streamed and streamed (built-in name model, aliases cut
// across 3-character frames), to a real gateway: it shows the originals, what left the browser holds only aliases,
// receipts are verified in the browser, and the fake provider saw aliases only.
//
// Cross-origin set-up: the page is served from its own origin and calls the gateway directly, which the gateway allows
// for exactly one origin, PORTAL_ORIGIN (docs/configuration.md), set here to the page's origin. That is how a browser
// application reaches a gateway for real (CORS preflight, exposed receipt headers), so no same-origin proxy stands in
// between to hide a missing header.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../../programs/fake-provider.ts"
import { bundleBrowserPage, splitBrowserBundle } from "../../../sdks/typescript/browserBundle.ts"
import { launchChromium } from "../../support/chromium.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"
import { fundedKey } from "../../support/tenant.ts"

const EMAIL = "jane.doe@example.com"
const PHONE = "+44 20 7946 0958"
const PROMPT = `Dr. Ada Lovelace asks: email ${EMAIL} or call ${PHONE} about the invoice.`

/** The chat page: a prompt, two buttons, and what left the browser, the answer and the receipt verdicts. */
const PAGE = (config: { gatewayUrl: string; apiKey: string }) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Private chat</title><link rel="icon" href="data:,"></head>
<body>
<textarea id="prompt"></textarea>
<button id="send">Send</button> <button id="send-stream">Send, streamed</button>
<h2>What left this browser</h2><pre id="left"></pre>
<h2>Answer</h2><pre id="answer"></pre>
<p>Receipt: <span id="receipt"></span>; checked again with verifyReceipt: <span id="receipt-offline"></span></p>
<p>Chunks: <span id="chunks">0</span></p>
<p id="status">loading</p>
<script type="application/json" id="config">${JSON.stringify(config)}</script>
<script type="module" src="/app.js"></script>
</body></html>`

const APP = `import { createJwksCache, RelayClient, verifyReceipt } from "/sdk.js"
const config = JSON.parse(document.getElementById("config").textContent)
const client = new RelayClient({ gatewayUrl: config.gatewayUrl, apiKey: config.apiKey })
const jwks = createJwksCache({ gatewayUrl: config.gatewayUrl })
const $ = (id) => document.getElementById(id)
const lastUser = (body) => body.messages.filter((m) => m.role === "user").at(-1).content
const showReceipt = async (receipt, verified) => {
  $("receipt").textContent = verified === true ? "verified" : "NOT verified"
  const again = await verifyReceipt(receipt, { jwks })
  $("receipt-offline").textContent = again.valid ? "valid" : "invalid: " + again.reason
}
const run = (streamed) => async () => {
  $("status").textContent = "working"
  $("answer").textContent = ""
  $("chunks").textContent = "0"
  try {
    const body = { model: "local-chat", messages: [{ role: "user", content: $("prompt").value }] }
    if (streamed) {
      const stream = await client.chat.completions.create({ ...body, stream: true })
      $("left").textContent = lastUser(stream.tokenisedRequest)
      let chunks = 0
      for await (const chunk of stream) {
        $("answer").textContent += chunk.choices[0]?.delta?.content ?? ""
        $("chunks").textContent = String(++chunks)
      }
      await showReceipt(stream.receipt, stream.receiptVerified)
    } else {
      const answer = await client.chat.completions.create(body)
      $("left").textContent = lastUser(answer.tokenisedRequest)
      $("answer").textContent = answer.choices[0].message.content
      await showReceipt(answer.receipt, answer.receiptVerified)
    }
    $("status").textContent = "done"
  } catch (error) {
    $("status").textContent = "error: " + (error.code ?? "") + " " + error.message
  }
}
$("send").onclick = run(false)
$("send-stream").onclick = run(true)
$("status").textContent = "ready"
`

let provider: FakeProvider
let gw: TestGateway
let site: Server
let browser: Browser
let page: Page
const pageErrors: Array<string> = []

beforeAll(async () => {
  const bundle = await bundleBrowserPage()
  let html = ""
  site = createServer((req, res) => {
    const [status, type, body] = req.url === "/" ? [200, "text/html", html] : req.url === "/app.js" ? [200, "text/javascript", APP] : req.url === "/sdk.js" ? [200, "text/javascript", bundle] : [404, "text/plain", "not found"]
    res.writeHead(status, { "content-type": `${type}; charset=utf-8` }).end(body)
  })
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`

  provider = await startFakeProvider({ port: 0, streamPieceChars: 3 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url, PORTAL_ORIGIN: origin })
  html = PAGE({ gatewayUrl: gw.url, apiKey: (await fundedKey(gw)).apiKey })

  browser = await launchChromium()
  page = await browser.newPage()
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("console", (message) => message.type() === "error" && pageErrors.push(message.text()))
  page.on("response", (response) => response.status() >= 400 && pageErrors.push(`${response.status()} ${response.url()}`))
  await page.goto(origin)
  await page.locator("#status", { hasText: "ready" }).waitFor({ timeout: 60_000 })
})
afterAll(async () => {
  await browser?.close()
  await gw?.close()
  await provider?.close()
  await new Promise((resolve) => site?.close(resolve))
})

const chat = async (button: "#send" | "#send-stream") => {
  provider.reset()
  await page.fill("#prompt", PROMPT)
  await page.click(button)
  await page.locator("#status", { hasText: /^(done|error)/ }).waitFor({ timeout: 60_000 })
  const text = (id: string) => page.locator(id).textContent()
  return { status: await text("#status"), left: await text("#left"), answer: await text("#answer"), receipt: await text("#receipt"), offline: await text("#receipt-offline"), chunks: Number(await text("#chunks")) }
}

const expectOnlyAliasesUpstream = () => {
  const seen = provider.received.map((r) => r.body.toString("utf8")).join("\n")
  expect(provider.received).toHaveLength(1)
  expect(seen).not.toContain(EMAIL)
  expect(seen).not.toContain("7946")
  expect(seen).not.toContain("Lovelace")
  expect(seen).toMatch(/<EMAIL_1_[0-9a-z]+>/)
}

describe("the SDK's browser bundle in Chromium", () => {
  it("a private chat completion: the page shows the originals, only aliases left the browser, the receipt verifies in the browser", async () => {
    const result = await chat("#send")
    expect(result.status).toBe("done")
    expect(result.answer).toBe(`Echo: ${PROMPT}`)
    expect(result.left).toMatch(/^Dr\. <PERSON_1_[0-9a-z]+> asks: email <EMAIL_1_[0-9a-z]+> or call <PHONE_1_[0-9a-z]+> about the invoice\.$/)
    expect(result.receipt).toBe("verified")
    expect(result.offline).toBe("valid")
    expectOnlyAliasesUpstream()
    expect(pageErrors).toEqual([])
  })

  it("a streamed chat completion: aliases cut across frames are restored on the page, the trailer receipt verifies", async () => {
    const result = await chat("#send-stream")
    expect(result.status).toBe("done")
    expect(result.answer).toBe(`Echo: ${PROMPT}`)
    expect(result.chunks).toBeGreaterThan(10)
    expect(result.left).not.toContain(EMAIL)
    expect(result.receipt).toBe("verified")
    expect(result.offline).toBe("valid")
    expectOnlyAliasesUpstream()
    expect(pageErrors).toEqual([])
  })
})

describe("the SDK's browser bundle, split as an application's bundler splits it", () => {
  it("keeps the built-in name model in a chunk of its own, loaded on first use, not in what a page loads at start", async () => {
    // splitBrowserBundle refuses a build whose start-up files hold the name model's code.
    const split = await splitBrowserBundle()
    expect(split.nameModel.files).toBeGreaterThanOrEqual(1)
    // The name model's data (gazetteers, word lists, cue words) is most of the engine's weight: far more than what is left at start.
    expect(split.nameModel.bytes).toBeGreaterThan(split.atStart.bytes)
  })
})
