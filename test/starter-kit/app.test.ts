// The starter kit as a person uses it: the app built by starter-kit/build.ts, served by starter-kit/server.ts with a
// gateway key from a file, in Debian's Chromium driven through playwright-core, against a real gateway and the fake
// provider (streaming in 3-character frames, so aliases are cut across frames). Between the starter server and the
// gateway sits a recording hop: it shows exactly what the server forwarded.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { readFile } from "../../sdks/typescript/src/index.ts"
import { buildStarterKit } from "../../starter-kit/build.ts"
import { type StarterServer, startStarterServer } from "../../starter-kit/server.ts"
import { launchChromium } from "../support/chromium.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { type RecordingProxy, startRecordingProxy } from "../support/recordingProxy.ts"
import { fundedKey } from "../support/tenant.ts"
import { makeDocx, ORIGINALS as FILE_ORIGINALS } from "../sdks/typescript/files/fixtures.ts"

// Git-ignored: a picture of the chat after the first test, for a person to look at.
const ARTEFACTS = join(import.meta.dirname, "..", "..", ".tmp", "test-artefacts", "starter-kit")

const NAME = "Ada Lovelace"
const EMAIL = "ada.lovelace@example.com"
const PHONE = "+44 20 7946 0958"
const IBAN = "DE89 3704 0044 0532 0130 00"
const PROMPT = `Please write to ${NAME} at ${EMAIL}, call ${PHONE} and pay into ${IBAN} today.`
const ORIGINALS = [NAME, "Lovelace", EMAIL, "7946 0958", IBAN, "DE89370400440532013000"]

let provider: FakeProvider
let gw: TestGateway
let hop: RecordingProxy
let starter: StarterServer
let broke: StarterServer
let browser: Browser
let apiKey: string
const work = mkdtempSync(join(tmpdir(), "starter-test-"))
const appDir = join(work, "app")

/** Everything the browser received: every response's URL, headers and body. */
interface Received {
  readonly url: string
  readonly text: string
}

const openApp = async (url: string): Promise<{ context: BrowserContext; page: Page; received: Array<Received>; errors: Array<string> }> => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const received: Array<Received> = []
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  page.on("response", async (response) => {
    // A response still arriving when the test closes its page can no longer read its raw headers; it is recorded with
    // the headers Chromium reported first (never dropped, and never an unhandled rejection).
    const headers = JSON.stringify(await response.allHeaders().catch(() => response.headers()))
    const body = await response.body().then((b) => b.toString("utf8"), () => "")
    received.push({ url: response.url(), text: `${headers}\n${body}` })
  })
  await page.goto(url)
  await page.locator(".engine-status[data-ready=true]").waitFor({ timeout: 60_000 })
  return { context, page, received, errors }
}

const writeKeyFile = (name: string, key: string) => {
  const file = join(work, name)
  writeFileSync(file, `${key}\n`, { mode: 0o600 })
  return file
}

const lastAnswer = (page: Page) => page.locator("li.message.assistant").last()

const sendAndWait = async (page: Page, text: string) => {
  await page.fill("#composer", text)
  await page.keyboard.press("Enter")
  await page.locator("li.message.assistant[data-status=done], li.message.assistant[data-status=error]").last().waitFor({ timeout: 60_000 })
}

beforeAll(async () => {
  const built = buildStarterKit(appDir)
  provider = await startFakeProvider({ port: 0, streamPieceChars: 3, chunkDelayMs: 2 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
  hop = await startRecordingProxy(gw.url)
  apiKey = (await fundedKey(gw)).apiKey
  const unfunded = (await fundedKey(gw, "0")).apiKey
  await built
  starter = await startStarterServer({ gatewayUrl: hop.url, keyFile: writeKeyFile("key", apiKey), appDir, port: 0, log: () => {} })
  broke = await startStarterServer({ gatewayUrl: hop.url, keyFile: writeKeyFile("unfunded-key", unfunded), appDir, port: 0, log: () => {} })
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await starter?.close()
  await broke?.close()
  await hop?.close()
  await gw?.close()
  await provider?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("the starter kit in Chromium", () => {
  it("streams a private answer: originals on the page, aliases only upstream, the key never in the browser, the receipt verified", async () => {
    const { context, page, received, errors } = await openApp(starter.url)
    provider.reset()
    hop.requests.length = 0
    await sendAndWait(page, PROMPT)

    const answer = lastAnswer(page)
    expect(await answer.getAttribute("data-status")).toBe("done")
    expect(await answer.locator(".content").textContent()).toBe(`Echo: ${PROMPT}`)

    // What left the device, as the page shows it: every identifier replaced by a highlighted alias.
    const user = page.locator("li.message.user").last()
    await user.locator(".what-left summary").click()
    const tokenised = (await user.getByTestId("tokenised").textContent())!
    for (const original of ORIGINALS) expect(tokenised).not.toContain(original)
    expect(tokenised).toMatch(/^Please write to <PERSON_1_[a-z2-9]+> at <EMAIL_1_[a-z2-9]+>, call <PHONE_1_[a-z2-9]+> and pay into <IBAN_1_[a-z2-9]+> today\.$/)
    expect(await user.locator("mark.alias").count()).toBe(4)
    expect(await user.locator("mark.alias").first().getAttribute("title")).toContain(NAME)

    // The provider got aliases only, and so did everything the starter server forwarded.
    expect(provider.received).toHaveLength(1)
    const upstream = provider.received[0]!.body.toString("utf8")
    for (const original of ORIGINALS) expect(upstream).not.toContain(original)
    expect(upstream).toContain(tokenised)
    const relayed = hop.requests.filter((r) => r.path === "/api/v1/chat/completions")
    expect(relayed).toHaveLength(1)
    for (const original of ORIGINALS) expect(relayed[0]!.body).not.toContain(original)
    expect(relayed[0]!.headers.authorization).toBe(`Bearer ${apiKey}`)
    expect(relayed[0]!.headers["x-service-engine"]).toMatch(/^relay-ts\//)
    expect(relayed[0]!.headers["x-service-attestation"]).toBeTruthy()
    for (const r of hop.requests) expect(r.headers.cookie).toBeUndefined()

    // The receipt, verified in the browser against the gateway's JWKS.
    const receipt = answer.locator(".receipt")
    await receipt.locator(".badge[data-verdict=verified]").waitFor({ timeout: 30_000 })
    const facts = await receipt.locator("dl").textContent()
    expect(facts).toContain("local")
    expect(facts).toContain("local-chat")
    expect(facts).toMatch(/\d+ in, \d+ out/)
    expect(facts).toMatch(/\$0\.\d{6} at list price/)
    await receipt.locator("details summary").click()
    expect(await receipt.locator(".checks li[data-status=ok]").count()).toBe(5)

    // Nothing the browser received carries the gateway key.
    await page.waitForTimeout(200)
    expect(received.length).toBeGreaterThan(3)
    for (const r of received) expect(r.text, r.url).not.toContain(apiKey)

    mkdirSync(ARTEFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTEFACTS, "starter-chat.png"), fullPage: true })
    expect(errors).toEqual([])
    await context.close()
  })

  it("reads an attached .docx in the browser: only its tokenised text leaves, the answer shows the originals and downloads as a rebuilt .docx with them", async () => {
    const { context, page, errors } = await openApp(starter.url)
    provider.reset()
    await page.getByTestId("file-input").setInputFiles({
      name: "hamilton.docx",
      mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      buffer: Buffer.from(await makeDocx())
    })
    expect(await page.getByTestId("attachment").textContent()).toMatch(/^hamilton\.docx \(docx, [\d,]+ characters, read on this device\)/)
    await sendAndWait(page, "Summarise the attached file.")
    const sensitive = [FILE_ORIGINALS.email, FILE_ORIGINALS.phone, FILE_ORIGINALS.iban, FILE_ORIGINALS.tableEmail, FILE_ORIGINALS.headerEmail, FILE_ORIGINALS.footerPhone]

    // Upstream: the file's text, tokenised; no original value, no file bytes.
    expect(provider.received).toHaveLength(1)
    const upstream = provider.received[0]!.body.toString("utf8")
    expect(upstream).toContain("--- File: hamilton.docx ---")
    for (const value of sensitive) expect(upstream).not.toContain(value)
    expect(upstream).not.toContain("file_data")

    // On the page: the answer (the fake provider echoes the text) with the originals back.
    const answer = lastAnswer(page)
    const shown = (await answer.locator(".content").textContent())!
    for (const value of sensitive) expect(shown).toContain(value)

    // Downloaded as a .docx rebuilt in the browser: the originals are in the file.
    expect(await answer.getByLabel("Save the answer as").inputValue()).toBe("docx")
    const [download] = await Promise.all([page.waitForEvent("download"), answer.getByRole("button", { name: "Download" }).click()])
    expect(download.suggestedFilename()).toBe("hamilton-answer.docx")
    const rebuilt = await readFile(new Uint8Array(readFileSync((await download.path())!)), { filename: "rebuilt.docx" })
    for (const value of [FILE_ORIGINALS.email, FILE_ORIGINALS.iban, FILE_ORIGINALS.tableEmail]) expect(rebuilt.text).toContain(value)
    mkdirSync(ARTEFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTEFACTS, "starter-attachment.png"), fullPage: true })
    expect(errors).toEqual([])
    await context.close()
  })

  it("refuses a file it cannot read, in plain words, and sends nothing", async () => {
    const { context, page } = await openApp(starter.url)
    provider.reset()
    await page.getByTestId("file-input").setInputFiles({ name: "broken.docx", mimeType: "application/octet-stream", buffer: Buffer.from("not a zip at all") })
    expect(await page.locator(".composer .error").textContent()).toMatch(/^broken\.docx: The file could not be read/)
    expect(await page.getByTestId("attachment").count()).toBe(0)
    expect(provider.received).toHaveLength(0)
    await context.close()
  })

  it("keeps conversations sealed in IndexedDB across a reload; a tampered receipt shows failed; clear all wipes everything", async () => {
    const { context, page } = await openApp(starter.url)
    await sendAndWait(page, `Call ${PHONE} tomorrow.`)
    await lastAnswer(page).locator(".badge[data-verdict=verified]").waitFor({ timeout: 30_000 })

    // At rest: sealed records, no original anywhere; both keys non-extractable.
    const stored = await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const req = indexedDB.open("privacy-relay-starter")
        req.onsuccess = () => resolve(req.result)
        req.onerror = () => reject(req.error)
      })
      const all = (name: string) =>
        new Promise<Array<any>>((resolve) => {
          const req = db.transaction(name).objectStore(name).getAll()
          req.onsuccess = () => resolve(req.result)
        })
      const conversations = await all("conversations")
      const keys = await all("keys")
      const exportable = await Promise.all(
        [keys[0].privateKey, keys[1]].map((k: CryptoKey) => crypto.subtle.exportKey("jwk", k).then(() => true, () => false))
      )
      const text = JSON.stringify(conversations) + new TextDecoder().decode(new Uint8Array(conversations[0].sealed.data))
      db.close()
      return { count: conversations.length, sealedBytes: conversations[0].sealed.data.byteLength, text, exportable, keyTypes: keys.map((k: any) => k.type ?? "pair") }
    })
    expect(stored.count).toBe(1)
    expect(stored.sealedBytes).toBeGreaterThan(100)
    expect(stored.text).not.toContain("7946")
    expect(stored.text).not.toContain("Call")
    expect(stored.exportable).toEqual([false, false])

    await page.reload()
    await page.locator(".engine-status[data-ready=true]").waitFor({ timeout: 60_000 })
    await expect.poll(() => lastAnswer(page).locator(".content").textContent()).toBe(`Echo: Call ${PHONE} tomorrow.`)
    await lastAnswer(page).locator(".badge[data-verdict=verified]").waitFor({ timeout: 30_000 })

    // Someone edits the stored receipt (fewer tokens billed): the badge, recomputed on display, fails.
    await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve) => {
        const req = indexedDB.open("privacy-relay-starter")
        req.onsuccess = () => resolve(req.result)
      })
      const store = db.transaction("receipts", "readwrite").objectStore("receipts")
      await new Promise<void>((resolve) => {
        const req = store.getAll()
        req.onsuccess = () => {
          for (const record of req.result) store.put({ ...record, receipt: { ...record.receipt, output_tokens: 1 } })
          store.transaction.oncomplete = () => resolve()
        }
      })
      db.close()
    })
    await page.reload()
    const tampered = lastAnswer(page).locator(".receipt")
    await tampered.locator(".badge[data-verdict=failed]").waitFor({ timeout: 30_000 })
    expect(await tampered.locator(".badge").textContent()).toBe("Receipt FAILED")
    await tampered.locator("details summary").click()
    expect(await tampered.locator(".checks li[data-status=fail]").textContent()).toContain("signature")

    // Clear all: the list empties and the database is gone (conversations, alias maps, receipts, keys).
    await page.getByRole("button", { name: "Clear all" }).click()
    await page.getByRole("button", { name: "Delete everything" }).click()
    await expect.poll(() => page.locator("li.conversation-item").count()).toBe(0)
    const left = await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve) => {
        const req = indexedDB.open("privacy-relay-starter")
        req.onsuccess = () => resolve(req.result)
      })
      const count = (name: string) =>
        new Promise<number>((resolve) => {
          const req = db.transaction(name).objectStore(name).count()
          req.onsuccess = () => resolve(req.result)
        })
      const result = { conversations: await count("conversations"), receipts: await count("receipts") }
      db.close()
      return result
    })
    expect(left).toEqual({ conversations: 0, receipts: 0 })
    await page.reload()
    await page.locator(".engine-status[data-ready=true]").waitFor({ timeout: 60_000 })
    expect(await page.locator("li.conversation-item").count()).toBe(0)
    await context.close()
  })

  it("stop cancels the stream (the provider's call ends), and retry answers again", async () => {
    const { context, page } = await openApp(starter.url)
    const long = `Tell ${EMAIL} this: ${"the quick brown fox jumps over the lazy dog ".repeat(50)}`
    provider.reset()
    await page.fill("#composer", long)
    await page.keyboard.press("Enter")
    const answer = lastAnswer(page)
    await expect.poll(async () => ((await answer.locator(".content").textContent()) ?? "").length, { timeout: 30_000 }).toBeGreaterThan(20)
    await page.getByRole("button", { name: "Stop" }).click()
    await answer.and(page.locator("[data-status=stopped]")).waitFor({ timeout: 10_000 })
    const partial = (await answer.locator(".content").textContent())!
    expect(partial.length).toBeLessThan(`Echo: ${long}`.length)
    await expect.poll(() => provider.openRequests(), { timeout: 10_000 }).toBe(0)

    await page.getByRole("button", { name: "Retry" }).click()
    await page.locator("li.message.assistant[data-status=done]").waitFor({ timeout: 60_000 })
    expect(await lastAnswer(page).locator(".content").textContent()).toBe(`Echo: ${long.trim()}`)
    await context.close()
  })

  it("shows a refusal in plain words: an account with no balance gets the top-up hint, and nothing reaches the provider", async () => {
    const { context, page } = await openApp(broke.url)
    provider.reset()
    await sendAndWait(page, `Email ${EMAIL}`)
    const error = lastAnswer(page).locator(".error")
    expect(await error.textContent()).toMatch(/balance .* used up.*Top it up/)
    expect(provider.received).toHaveLength(0)
    expect(await page.getByRole("button", { name: "Retry" }).count()).toBe(1)
    await context.close()
  })

  it("refuses a message too long to tokenise in the browser, in plain words, before tokenising it; nothing is sent", async () => {
    const { context, page } = await openApp(starter.url)
    provider.reset()
    hop.requests.length = 0
    await sendAndWait(page, `Mail ${EMAIL} `.repeat(8_000))
    expect(await lastAnswer(page).locator(".error").textContent()).toMatch(/^Too long to tokenise in this browser: .* 200,000\. .*Nothing was sent\.$/)
    expect(provider.received).toHaveLength(0)
    expect(hop.requests.filter((r) => r.method === "POST")).toHaveLength(0)
    await context.close()
  })

  it("with the name switch off, names are sent as typed and the other identifiers are still aliased", async () => {
    const { context, page } = await openApp(starter.url)
    await page.getByLabel("Detect names on this device").uncheck()
    await page.locator(".engine-status[data-ready=true]", { hasText: "names off" }).waitFor({ timeout: 60_000 })
    provider.reset()
    await sendAndWait(page, `Ask ${NAME} at ${EMAIL}`)
    const upstream = provider.received[0]!.body.toString("utf8")
    expect(upstream).toContain(NAME)
    expect(upstream).not.toContain(EMAIL)
    await page.getByLabel("Detect names on this device").check()
    await context.close()
  })

  it("the main flow works with the keyboard alone, and axe-core finds no serious or critical violation", async () => {
    const { context, page } = await openApp(starter.url)
    // From the top of the page, Tab until the composer has focus, type, send with Enter.
    let focused = ""
    for (let i = 0; i < 20 && focused !== "composer"; i++) {
      await page.keyboard.press("Tab")
      focused = await page.evaluate(() => document.activeElement?.id ?? "")
    }
    expect(focused).toBe("composer")
    await page.keyboard.type(`Reach me at ${EMAIL}`)
    await page.keyboard.press("Enter")
    await page.locator("li.message.assistant[data-status=done]").last().waitFor({ timeout: 60_000 })
    // Shift+Tab back to the "What left your device" toggle and open it with the keyboard.
    let onSummary = false
    for (let i = 0; i < 30 && !onSummary; i++) {
      await page.keyboard.press("Shift+Tab")
      onSummary = await page.evaluate(() => document.activeElement?.tagName === "SUMMARY" && document.activeElement.textContent!.startsWith("What left"))
    }
    expect(onSummary).toBe(true)
    await page.keyboard.press("Enter")
    expect(await page.locator("li.message.user details.what-left").last().getAttribute("open")).not.toBeNull()
    await lastAnswer(page).locator(".badge[data-verdict=verified]").waitFor({ timeout: 30_000 })

    const axeSource = createRequire(import.meta.url)("fs").readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
    await page.evaluate(axeSource)
    const { passes, violations } = await page.evaluate(async () => {
      const result = await (window as any).axe.run(document)
      return { passes: result.passes.length as number, violations: result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })) }
    })
    expect(passes).toBeGreaterThan(10)
    expect(violations.filter((v: { impact: string }) => v.impact === "serious" || v.impact === "critical")).toEqual([])
    await context.close()
  })
})
