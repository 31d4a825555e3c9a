// The portal end to end in Debian's Chromium: built once with Vite, served by a real gateway (loopback, fake provider,
// embedded or PostgreSQL storage), driven like a person would. Sign up, verify from the development mail outbox,
// sign in, create a key, call through the SDK, see the call in usage and receipts (verified in the browser), add a
// webhook endpoint on a local receiver, see deliveries and replay one, top up, rotate and revoke the key and see
// the old ones refused. Every page is checked with axe-core and at 375 px; screenshots go to .tmp/artefacts/portal/.
import axe from "axe-core"
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { build } from "vite"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { setOperator } from "../../layers/AdminOperations.ts"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { RelayClient, verifyWebhook } from "../../sdks/typescript/src/index.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { launchChromium } from "../support/chromium.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"

const ARTEFACTS = join(import.meta.dirname, "..", "..", ".tmp", "artefacts", "portal")
const EMAIL = "ada@example.org"
const PASSWORD = "correct horse battery staple"

interface Hook {
  readonly headers: Record<string, string>
  readonly body: string
}

let provider: FakeProvider
let gw: TestGateway
let receiver: Server
let receiverUrl: string
const hooks: Array<Hook> = []
let browser: Browser
let context: BrowserContext
let page: Page
const pageErrors: Array<string> = []
let deviceKey: CryptoKeyPair

beforeAll(async () => {
  // This run's pictures only: an older run's (or a failed step's) must not pass for this one's.
  rmSync(ARTEFACTS, { recursive: true, force: true })
  mkdirSync(ARTEFACTS, { recursive: true })
  const outDir = mkdtempSync(join(tmpdir(), "pr-portal-build-"))
  await build({ configFile: join(import.meta.dirname, "..", "..", "portal", "vite.config.ts"), logLevel: "error", build: { outDir } })

  receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      hooks.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString("utf8") })
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`

  process.env.PRIVACY_RELAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), "pr-portal-config-"))
  deviceKey = await generateSigningKeyPair()
  provider = await startFakeProvider({ port: 0 })
  gw = await startTestGateway({
    LOCAL_PROVIDER_URL: provider.url,
    PORTAL_DIR: outDir,
    WEBHOOK_ALLOW_LOOPBACK: "1",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,50,50,50,50,50,50"
  })

  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
  page = await context.newPage()
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("console", (message) => message.type() === "error" && pageErrors.push(message.text()))
})
afterEach(async (ctx) => {
  // A failing step leaves a picture of the page as it was.
  if (ctx.task.result?.state === "fail") await page?.screenshot({ path: join(ARTEFACTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}.png`), fullPage: true }).catch(() => undefined)
})
afterAll(async () => {
  await browser?.close()
  await gw?.close()
  await provider?.close()
  await new Promise((resolve) => receiver?.close(resolve))
})

const shot = (name: string, target: Page = page) => target.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage: true })
const go = async (path: string, target: Page = page) => {
  await target.goto(`${gw.url}/portal${path}`)
  await target.locator("main h1").first().waitFor()
}

/** axe-core on the current page (WCAG 2.x A/AA rules and best practices): the serious and critical findings. */
const axeFindings = async (target: Page = page) => {
  await target.evaluate(axe.source)
  const results = await target.evaluate(() => (globalThis as any).axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] }))
  return (results.violations as Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>)
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}) at ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`)
}

const client = (apiKey: string) => new RelayClient({ gatewayUrl: gw.url, apiKey, nameModel: "off", deviceKey, retries: 0 })
const callWith = (apiKey: string) => client(apiKey).chat.completions.create({ model: "local-chat", messages: [{ role: "user", content: "hello from the portal test" }] })
const refusal = async (apiKey: string) => {
  try {
    await callWith(apiKey)
    return { status: 200, code: "none" }
  } catch (error) {
    return { status: (error as { status: number }).status, code: (error as { code: string }).code }
  }
}

let firstKey: string
let firstPrefix: string
let jti: string

describe("portal in Chromium", () => {
  it("sends a visitor without a session to sign-in", async () => {
    await page.goto(`${gw.url}/portal/`)
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    // The sign-in form is drawn first and the address replaced just after (an effect once the session check answered).
    await page.waitForURL((url) => url.pathname === "/portal/sign-in", { timeout: 5_000 })
    expect(new URL(page.url()).pathname).toBe("/portal/sign-in")
    expect(await axeFindings()).toEqual([])
    await shot("01-sign-in")
  })

  it("signs up, verifies the address from the development outbox, and signs in with the $2 trial credit", async () => {
    await page.getByRole("link", { name: "Create an account" }).click()
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel(/^Password/).fill(PASSWORD)
    await page.getByLabel(/^Organisation name/).fill("Analytical Engines")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor()
    expect(await axeFindings()).toEqual([])
    await shot("02-check-your-mail")

    const mails = await gw.query<{ body_text: string }>("SELECT body_text FROM mail_outbox WHERE to_address = $1", EMAIL)
    expect(mails).toHaveLength(1)
    // The mail's link (the gateway's verify route) opened in the browser: sent to the portal's page, which verifies.
    const link = new URL(/(http\S+\/api\/v1\/account\/verify\?token=[A-Za-z0-9_-]+)/.exec(mails[0].body_text)![1])
    await page.goto(`${gw.url}${link.pathname}${link.search}`)
    await page.getByRole("heading", { name: "E-mail verified" }).waitFor()
    expect(await page.locator("main").textContent()).toContain("The $2 trial credit is in your wallet")
    // The token left the address bar once used.
    expect(page.url()).toBe(`${gw.url}/portal/verify`)
    await shot("03-verified")

    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByLabel("E-mail").fill(EMAIL)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Overview" }).waitFor()
    await expect.poll(() => page.getByTestId("balance").textContent()).toBe("$2.00")
    expect(await page.getByTestId("signed-in-as").textContent()).toBe(EMAIL)
    const cookies = await context.cookies()
    expect(cookies.find((c) => c.name === "pr_session")?.httpOnly).toBe(true)
    expect(cookies.find((c) => c.name === "pr_csrf")?.httpOnly).toBe(false)
  })

  it("refuses a cookie-authenticated write without the CSRF header (403 csrf_failed), nothing created", async () => {
    const answer = await page.evaluate(async () => {
      const res = await fetch("/api/keys", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "forged" }) })
      return { status: res.status, body: await res.json() }
    })
    expect(answer.status).toBe(403)
    expect(answer.body.error.code).toBe("csrf_failed")
    expect(await gw.query("SELECT id FROM api_keys WHERE name = 'forged'")).toEqual([])
  })

  it("creates a key with a scope and a model allowlist, shown once with a copy button", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Keys" }).click()
    await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor()
    await page.getByText("No keys yet").waitFor()
    await page.getByLabel("Name").fill("backend")
    await page.getByRole("checkbox", { name: /^completions/ }).check()
    await page.getByRole("checkbox", { name: "local-chat", exact: true }).check()
    await page.getByRole("button", { name: "Create key" }).click()
    const secret = page.getByTestId("secret")
    await secret.waitFor()
    firstKey = (await secret.textContent())!
    expect(firstKey).toMatch(/^svc_[a-z2-7]+$/)
    expect(await page.getByRole("button", { name: "Copy" }).isVisible()).toBe(true)
    const row = page.locator("tr", { hasText: "backend" })
    await row.waitFor()
    expect(await row.textContent()).toContain("completions")
    expect(await row.textContent()).toContain("local-chat")
    firstPrefix = (await row.getAttribute("data-key-prefix"))!
    const stored = await gw.query<{ permissions: Array<string>; models: Array<string> }>("SELECT permissions, models FROM api_keys WHERE key_prefix = $1", firstPrefix)
    expect(stored).toEqual([{ permissions: ["completions"], models: ["local-chat"] }])
    expect(await axeFindings()).toEqual([])
    await shot("04-keys-created")
  })

  it("a call through the SDK with that key shows in usage (with CSV export) and in receipts with a verified badge", async () => {
    const answer = await callWith(firstKey)
    expect(answer.receiptVerified).toBe(true)
    jti = answer.receipt!.jti as string

    await go("/usage")
    const rows = page.getByTestId("usage-row")
    await rows.first().waitFor()
    expect(await rows.count()).toBe(1)
    // The model with its provider (a routed local-economy/local-chat call must not look like local/local-chat).
    expect(await rows.first().textContent()).toContain("local/local-chat")
    // The key filter names keys by name and prefix.
    await page.getByLabel("Key").selectOption({ label: `backend (${firstPrefix})` })
    expect(await rows.count()).toBe(1)
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: /Export CSV/ }).click()])
    const csv = readFileSync((await download.path())!, "utf8")
    const lines = csv.trim().split("\r\n")
    expect(lines[0]).toBe("finished_at,request_id,key_id,provider,model,capability,input_tokens,output_tokens,billed_usd,partial,estimated,receipt_jti")
    expect(lines).toHaveLength(2)
    expect(lines[1]).toContain(`"local-chat"`)
    expect(lines[1]).toContain(`"${jti}"`)
    expect(await axeFindings()).toEqual([])
    await shot("05-usage")

    await go("/receipts")
    const badge = page.locator("tr", { hasText: "local/local-chat" }).locator(".badge")
    await expect.poll(() => badge.textContent()).toBe("verified")
    expect(await page.getByTestId("chain-status").textContent()).toContain("linked")
    expect(await axeFindings()).toEqual([])
    await shot("06-receipts")

    // The JTI lookup: the id a call's answer carried opens that receipt.
    await page.getByLabel("Receipt JTI").fill(jti)
    await page.getByRole("button", { name: "Look up" }).click()
    await page.getByRole("heading", { name: /^Receipt/ }).waitFor()
    await expect.poll(() => page.locator("dl.facts .badge").first().textContent()).toBe("verified")
    await expect.poll(() => page.getByTestId("inclusion").textContent()).toMatch(/included|No inclusion proof/)
    expect(await axeFindings()).toEqual([])
    await shot("07-receipt-detail")

    // A call the key's scopes do not allow: refused after the key was accepted, so it counts in the error rate.
    const refused = await client(firstKey).messages.create({ model: "local-chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }).then(() => "sent", (e) => e.code)
    expect(refused).toBe("insufficient_scope")

    await go("/")
    await expect.poll(() => page.getByTestId("calls-month").textContent()).toBe("1")
    await expect.poll(async () => {
      await go("/")
      return page.getByTestId("error-rate").textContent()
    }, { timeout: 20_000 }).toBe("50.0%")
    expect(await page.locator("main").textContent()).toContain("1 of 2 calls refused; most often insufficient_scope")
    expect(await page.locator("canvas[role=img]").getAttribute("aria-label")).toContain("local/local-chat")
    // Headline cards in cents, the exact amount in the tooltip.
    expect(await page.getByTestId("balance").textContent()).toMatch(/^\$\d+\.\d{2}$/)
    expect(await page.getByTestId("balance").getAttribute("title")).toMatch(/^exactly \$\d+\.\d{2,6}$/)
    expect(await axeFindings()).toEqual([])
    await shot("08-overview")
  })

  it("adds a webhook endpoint on a local receiver (secret shown once), sends a test, shows the delivery and replays it", async () => {
    await go("/webhooks")
    await page.getByText("No endpoints yet").waitFor()
    await page.getByLabel(/^URL/).fill(receiverUrl)
    await page.getByRole("button", { name: "Add endpoint" }).click()
    const secret = (await page.getByTestId("secret").textContent())!
    expect(secret.length).toBeGreaterThan(20)
    await page.getByTestId("endpoint").waitFor()

    await page.getByRole("button", { name: "Send test" }).click()
    await expect.poll(() => hooks.filter((h) => h.body.includes("webhook.test")).length, { timeout: 20_000 }).toBe(1)
    const test = hooks.find((h) => h.body.includes("webhook.test"))!
    // The secret the page showed is the one that signs deliveries.
    expect(await verifyWebhook({ body: test.body, headers: test.headers, secret })).toBe(true)

    const deliveryRow = page.locator("[data-testid=delivery-row][data-event='webhook.test']")
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click()
      return (await deliveryRow.first().textContent()) ?? ""
    }, { timeout: 20_000 }).toContain("delivered")
    expect(await axeFindings()).toEqual([])
    await shot("09-webhooks")

    await deliveryRow.first().getByRole("link").click()
    await page.getByRole("heading", { name: /^Delivery #/ }).waitFor()
    expect(await page.locator("pre.json").textContent()).toContain("webhook.test")
    const before = hooks.length
    await page.getByRole("button", { name: "Replay this delivery" }).click()
    await page.getByText(/^replay of #|Replay of/).first().waitFor()
    await expect.poll(() => hooks.length, { timeout: 20_000 }).toBe(before + 1)
    await expect.poll(async () => {
      await page.reload()
      return page.getByTestId("delivery-status").textContent()
    }, { timeout: 20_000 }).toBe("delivered")
    expect(await axeFindings()).toEqual([])
    await shot("10-delivery-replayed")
  })

  it("tops up through the development payments provider and shows the credit in the ledger", async () => {
    await go("/billing")
    // The card rounds to the cent ($2.00 for $1.99...); its title has the exact amount.
    await expect.poll(() => page.getByTestId("billing-balance").getAttribute("title")).toMatch(/^exactly \$1\.9\d+$/)
    expect((await page.getByTestId("billing-balance").textContent())!.trim()).toBe("$2.00")
    const exact = async () => Number((await page.getByTestId("billing-balance").getAttribute("title"))!.replace("exactly $", ""))
    const before = await exact()
    await page.getByLabel("Amount in USD").fill("5")
    await page.getByRole("button", { name: "Continue to payment" }).click()
    await page.getByRole("button", { name: "Confirm payment (development)" }).click()
    await page.getByText("$5.00 added to your balance.").waitFor()
    await expect.poll(exact).toBeCloseTo(before + 5, 6)
    await expect.poll(() => page.getByTestId("ledger-row").count()).toBeGreaterThanOrEqual(2)
    expect(await page.locator("table").textContent()).toContain("trial credit")
    expect(await axeFindings()).toEqual([])
    await shot("11-billing")
  })

  it("provider keys: stores an OpenAI key and an AWS key pair (only last4 shown, field cleared, stored encrypted), explains a refused key, removes one after confirming", async () => {
    const [own] = await gw.query<{ org_id: string }>("SELECT org_id FROM accounts WHERE email = $1", EMAIL)
    const stored = () => gw.query<{ provider: string; last4: string; ciphertext: string }>("SELECT provider, last4, ciphertext FROM byok_credentials WHERE org_id = $1 ORDER BY provider", own.org_id)
    await go("/providers")
    await page.getByText("No provider keys stored.").waitFor()
    await page.getByLabel("Provider", { exact: true }).selectOption("openai")
    // Refused by the gateway (inner space): its message and stable code, nothing stored.
    const errorsBefore = pageErrors.length
    await page.getByLabel("API key").fill("sk-with space")
    await page.getByRole("button", { name: "Store key" }).click()
    await page.getByRole("alert").filter({ hasText: "invalid_request" }).waitFor()
    expect(await stored()).toEqual([])
    // Chromium logs the refused request itself: that one is expected, and only that one.
    await expect.poll(() => pageErrors.length).toBe(errorsBefore + 1)
    expect(pageErrors.splice(errorsBefore)).toEqual([expect.stringContaining("status of 400")])

    const openaiKey = "sk-portal-test-0123456789-Ab12"
    await page.getByLabel("API key").fill(openaiKey)
    await page.getByRole("button", { name: "Store key" }).click()
    await page.getByText("The openai key ending Ab12 is stored.").waitFor()
    expect(await page.getByLabel("API key").inputValue()).toBe("")
    await page.locator('[data-testid="provider-key"][data-provider="openai"]', { hasText: "…Ab12" }).waitFor()

    await page.getByLabel("Provider", { exact: true }).selectOption("aws-bedrock")
    await page.getByLabel("AWS access key pair (SigV4)").check()
    await page.getByLabel("Access key id").fill("AKIAPORTALTEST0WXYZ")
    await page.getByLabel("Secret access key").fill("portal-test-secret-access-key-0123456789")
    await page.getByLabel("Region").fill("eu-central-1")
    await page.getByRole("button", { name: "Store key" }).click()
    await page.getByText("The aws-bedrock key ending WXYZ is stored.").waitFor()
    await page.locator('[data-testid="provider-key"][data-provider="aws-bedrock"]', { hasText: "…WXYZ" }).waitFor()
    const rows = await stored()
    expect(rows.map((r) => [r.provider, r.last4])).toEqual([["aws-bedrock", "WXYZ"], ["openai", "Ab12"]])
    for (const row of rows) {
      expect(row.ciphertext).not.toContain("portal-test")
      expect(row.ciphertext).not.toContain("AKIAPORTALTEST")
    }
    // The page never shows a stored key again.
    const text = (await page.locator("main").textContent())!
    expect(text).not.toContain(openaiKey)
    expect(text).not.toContain("portal-test-secret")
    expect(await axeFindings()).toEqual([])
    await shot("11b-provider-keys")

    await page.locator('[data-testid="provider-key"][data-provider="openai"]').getByRole("button", { name: "Remove" }).click()
    await page.getByRole("dialog", { name: "Remove the openai key?" }).getByRole("button", { name: "Remove key" }).click()
    await page.getByText("The openai key ending Ab12 was removed.").waitFor()
    await expect.poll(() => page.getByTestId("provider-key").count()).toBe(1)
    expect((await stored()).map((r) => r.provider)).toEqual(["aws-bedrock"])
  })

  it("partner mode: creates a sub-organisation, shows its balance and usage, and adds a person to it", async () => {
    await go("/organisations")
    await page.getByText("No sub-organisations yet.").waitFor()
    await page.getByLabel("Name").fill("Lovelace Clients")
    await page.getByRole("button", { name: "Create", exact: true }).click()
    const card = page.getByTestId("sub-organisation")
    await card.waitFor()
    expect(await card.textContent()).toContain("Lovelace Clients")
    expect(await card.textContent()).toContain("Balance: $0.00")
    const [sub] = await gw.query<{ id: string; parent_id: string }>("SELECT id, parent_id FROM organisations WHERE name = 'Lovelace Clients'")
    const [own] = await gw.query<{ org_id: string }>("SELECT org_id FROM accounts WHERE email = $1", EMAIL)
    expect(sub.parent_id).toBe(own.org_id)
    await card.getByRole("button", { name: "Usage, keys and members" }).click()
    await card.getByText("No calls in the last 30 days.").waitFor()
    await card.getByLabel("E-mail").fill("charles@example.org")
    await card.getByRole("button", { name: "Add person" }).click()
    await card.getByText("charles@example.org was invited").waitFor()
    expect(await gw.query("SELECT m.role FROM memberships m JOIN accounts a ON a.id = m.account_id WHERE a.email = 'charles@example.org' AND m.org_id = $1", sub.id)).toEqual([{ role: "member" }])
    await card.getByText("No keys yet.").waitFor()
    await card.getByLabel("Key name").fill("client app")
    await card.getByRole("button", { name: "Create key" }).click()
    const subKey = (await card.getByTestId("secret").textContent())!
    expect(subKey).toMatch(/^svc_[a-z2-7]+$/)
    expect(await gw.query("SELECT org_id FROM api_keys WHERE name = 'client app'")).toEqual([{ org_id: sub.id }])
    // The sub-organisation's keys are listed in its card, and can be rotated and revoked from there.
    const subRow = card.locator("tr", { hasText: "client app" })
    await subRow.waitFor()
    expect(await subRow.getAttribute("data-key-prefix")).toBe(subKey.slice(0, 10))
    expect(await axeFindings()).toEqual([])
    await shot("12-sub-organisations")

    await subRow.getByRole("button", { name: "Rotate" }).click()
    const rotate = page.getByRole("dialog", { name: /^Rotate client app/ })
    expect(await rotate.textContent()).toContain("deploy the new key at once")
    await rotate.getByRole("button", { name: "Rotate now" }).click()
    await card.getByRole("status").filter({ hasText: "Deploy the new key at once" }).waitFor()
    const rotatedSub = (await card.getByTestId("secret").textContent())!
    expect(rotatedSub).not.toBe(subKey)
    expect(await refusal(subKey)).toEqual({ status: 401, code: "key_revoked" })
    // The successor is accepted (and refused only for the sub-organisation's empty wallet).
    expect(await refusal(rotatedSub)).toEqual({ status: 402, code: "insufficient_balance" })
    const successor = card.locator(`tr[data-key-prefix="${rotatedSub.slice(0, 10)}"]`)
    await successor.getByRole("button", { name: "Revoke" }).click()
    await page.getByRole("dialog", { name: /^Revoke client app/ }).getByRole("button", { name: "Revoke key" }).click()
    await expect.poll(() => successor.locator(".badge").first().textContent()).toBe("revoked")
    expect(await refusal(rotatedSub)).toEqual({ status: 401, code: "key_revoked" })
    expect(await gw.query("SELECT status FROM api_keys WHERE org_id = $1 ORDER BY created_at", sub.id)).toEqual([{ status: "rotated" }, { status: "revoked" }])
    await shot("12b-sub-organisation-keys")
  })

  it("admin view: refused (403 insufficient_ability, nothing listed) until the operator flag is granted, then lists organisations, keys and chains", async () => {
    expect(await page.getByRole("navigation").getByRole("link", { name: "Admin" }).count()).toBe(0)
    await go("/admin")
    const refused = page.getByRole("alert").first()
    await refused.waitFor()
    expect(await refused.textContent()).toContain("insufficient_ability")
    expect(await page.getByTestId("admin-org").count()).toBe(0)
    expect(await page.getByTestId("admin-key").count()).toBe(0)

    expect(await gw.runtime.runPromise(setOperator({ email: EMAIL, action: "grant" }, "portal-test"))).toMatchObject({ operator: true })
    await go("/")
    await page.getByRole("navigation").getByRole("link", { name: "Admin" }).click()
    await page.getByRole("heading", { name: "Admin", level: 1 }).waitFor()
    const orgs = page.getByTestId("admin-org")
    await orgs.first().waitFor()
    const orgText = await page.locator("table", { has: orgs.first() }).textContent()
    expect(orgText).toContain("Analytical Engines")
    expect(orgText).toContain("Lovelace Clients")
    const keys = page.getByTestId("admin-key")
    await keys.first().waitFor()
    expect(await keys.count()).toBe((await gw.query("SELECT id FROM api_keys")).length)
    expect(await page.locator(`[data-testid=admin-key][data-key-prefix="${firstPrefix}"] .badge`).textContent()).toBe("active")
    // Metadata only: no key is on the page.
    expect(await page.locator("main").textContent()).not.toContain(firstKey)
    const [chains] = await gw.query<{ n: string | number }>("SELECT count(*) AS n FROM receipt_chains")
    await expect.poll(() => page.getByTestId("admin-chain").count()).toBe(Number(chains.n))
    expect(await page.getByTestId("chain-summary").textContent()).toContain("none")
    expect(await axeFindings()).toEqual([])
    await shot("13-admin")
  })

  it("rotates the key after the 'deploy at once' warning (the old key is refused), then revokes the new one", async () => {
    await go("/keys")
    await page.getByRole("button", { name: "Rotate" }).click()
    const dialog = page.getByRole("dialog", { name: /^Rotate/ })
    expect(await dialog.textContent()).toContain("deploy the new key at once")
    await shot("13-rotate-warning")
    await dialog.getByRole("button", { name: "Rotate now" }).click()
    await page.getByRole("status").filter({ hasText: "Deploy the new key at once: the previous key already stopped working" }).waitFor()
    expect(await dialog.isVisible()).toBe(false)
    const rotated = (await page.getByTestId("secret").textContent())!
    expect(rotated).not.toBe(firstKey)
    expect(await refusal(firstKey)).toMatchObject({ status: 401 })
    expect((await callWith(rotated)).receiptVerified).toBe(true)

    const active = page.locator("tr", { hasText: "active" })
    await active.getByRole("button", { name: "Revoke" }).click()
    await page.getByRole("dialog", { name: /^Revoke/ }).getByRole("button", { name: "Revoke key" }).click()
    await expect.poll(() => page.locator("tr .badge.active").count()).toBe(0)
    expect(await refusal(rotated)).toEqual({ status: 401, code: "key_revoked" })
    expect(await axeFindings()).toEqual([])
    await shot("14-keys-revoked")
  })

  it("pages through more receipts and usage rows than one page holds (Load older)", async () => {
    const [own] = await gw.query<{ org_id: string }>("SELECT org_id FROM accounts WHERE email = $1", EMAIL)
    // Copies of the organisation's first call, older than every real one: 200 usage rows (one usage page) and 50
    // receipts (one receipt page), each with its own id so the lists can tell them apart.
    await gw.query(`INSERT INTO usage_records (id, request_id, gateway_request_id, org_id, parent_org_id, key_id, provider, model, capability,
        key_mode, input_tokens, output_tokens, estimated, partial, upstream_cost_micros, billed_micros, markup_micros, receipt_jti, trace_id, started_at, finished_at)
      SELECT 'usage_copy_' || g, u.request_id, u.gateway_request_id, u.org_id, u.parent_org_id, u.key_id, u.provider, u.model, u.capability,
        u.key_mode, u.input_tokens, u.output_tokens, u.estimated, u.partial, u.upstream_cost_micros, u.billed_micros, u.markup_micros, NULL, u.trace_id,
        u.started_at - g * interval '1 minute', u.finished_at - g * interval '1 minute'
      FROM (SELECT * FROM usage_records WHERE org_id = $1 ORDER BY finished_at LIMIT 1) u, generate_series(1, 200) g`, own.org_id)
    await gw.query(`INSERT INTO receipts_v1 (jti, org_id, account_id, chain_id, seq, model, capability, envelope, created_at)
      SELECT md5('copy' || g), r.org_id, r.account_id, 'copy-chain', g, r.model, r.capability,
        jsonb_set(r.envelope, '{jti}', to_jsonb(md5('copy' || g))), r.created_at - g * interval '1 minute'
      FROM (SELECT * FROM receipts_v1 WHERE org_id = $1 ORDER BY created_at LIMIT 1) r, generate_series(1, 50) g`, own.org_id)
    const [usageTotal] = await gw.query<{ n: string | number }>("SELECT count(*) AS n FROM usage_records WHERE org_id = $1", own.org_id)
    const [receiptTotal] = await gw.query<{ n: string | number }>("SELECT count(*) AS n FROM receipts_v1 WHERE org_id = $1", own.org_id)

    await go("/usage")
    const usageRows = page.getByTestId("usage-row")
    await expect.poll(() => usageRows.count()).toBe(200)
    await page.getByRole("button", { name: "Load older calls" }).click()
    await expect.poll(() => usageRows.count()).toBe(Number(usageTotal.n))
    expect(await page.getByRole("button", { name: "Load older calls" }).count()).toBe(0)

    await go("/receipts")
    const receiptRows = page.getByTestId("receipt-row")
    await expect.poll(() => receiptRows.count()).toBe(50)
    await page.getByRole("button", { name: "Load older receipts" }).click()
    await expect.poll(() => receiptRows.count()).toBe(Number(receiptTotal.n))
    expect(await page.getByRole("button", { name: "Load older receipts" }).count()).toBe(0)
    // The newest (real) receipts still verify; the copies (jti changed after signing) do not.
    expect(await receiptRows.first().locator(".badge").textContent()).toBe("verified")
    await expect.poll(() => receiptRows.last().locator(".badge").textContent()).toBe("not valid")
  })

  it("works at 375 px: no page scrolls sideways and every page passes axe", async () => {
    const mobile = await browser.newContext({ viewport: { width: 375, height: 812 }, storageState: await context.storageState() })
    const small = await mobile.newPage()
    try {
      for (const [path, name] of [["/", "overview"], ["/keys", "keys"], ["/usage", "usage"], ["/receipts", "receipts"], ["/webhooks", "webhooks"], ["/billing", "billing"], ["/providers", "provider-keys"], ["/organisations", "sub-organisations"], ["/admin", "admin"]] as const) {
        await go(path, small)
        await small.waitForLoadState("networkidle")
        expect(await small.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(375)
        expect(await axeFindings(small), path).toEqual([])
        await shot(`375px-${name}`, small)
      }
    } finally {
      await mobile.close()
    }
  }, 180_000)

  it("signs out: the session cookie no longer opens the API", async () => {
    await go("/")
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    const status = await page.evaluate(async () => (await fetch("/api/v1/account")).status)
    expect(status).toBe(401)
    expect(pageErrors.filter((e) => !/status of 40[13]/.test(e))).toEqual([])
  })

  it("works from the keyboard alone: skip link, sign-in, navigation, a key created, the rotate dialog closed with Escape", async () => {
    const focused = () => page.evaluate(() => {
      const e = document.activeElement as HTMLElement | null
      return `${e?.tagName.toLowerCase()}|${e?.getAttribute("name") ?? ""}|${(e?.textContent ?? "").trim()}`
    })
    /** Presses Tab until the focused element matches (at most 40 times): proves it is reachable in tab order. */
    const tabTo = async (pattern: RegExp) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press("Tab")
        if (pattern.test(await focused())) return
      }
      throw new Error(`never reached ${pattern} with Tab; last focus ${await focused()}`)
    }
    await page.goto(`${gw.url}/portal/sign-in`)
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("a||Skip to content")
    await tabTo(/^input\|email\|/)
    await page.keyboard.type(EMAIL)
    await page.keyboard.press("Tab")
    expect(await focused()).toMatch(/^input\|password\|/)
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { name: "Overview" }).waitFor()

    await tabTo(/^a\|\|Keys$/)
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor()
    await tabTo(/^input\|key-name\|/)
    await page.keyboard.type("keyboard")
    await tabTo(/^button\|\|Create key$/)
    await page.keyboard.press("Enter")
    await page.getByTestId("secret").waitFor()
    const row = page.locator("tr", { hasText: "keyboard" })
    await row.waitFor()
    await tabTo(/^button\|\|Rotate$/)
    await page.keyboard.press("Enter")
    const dialog = page.getByRole("dialog", { name: /^Rotate/ })
    await dialog.waitFor()
    await page.keyboard.press("Escape")
    await expect.poll(() => dialog.isVisible()).toBe(false)
    expect(await row.locator(".badge").first().textContent()).toBe("active")
    await shot("15-keyboard")
  })
})
