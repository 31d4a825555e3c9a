import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OPENAPI_JSON_PATH } from "../../../layers/http/api/generate.ts"
import { launchChromium } from "../../support/chromium.ts"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"


let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
})
afterAll(() => gw?.close())

describe("the OpenAPI document and its rendered reference, served by the gateway", () => {
  it("GET /api/v1/openapi.json answers the checked-in document, without authentication", async () => {
    const res = await fetch(`${gw.url}/api/v1/openapi.json`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("application/json")
    expect(await res.json()).toEqual(JSON.parse(readFileSync(OPENAPI_JSON_PATH, "utf8")))
  })

  it("GET /docs/api renders the reference in a browser from the gateway alone: nothing is fetched from another origin", async () => {
    const page = await fetch(`${gw.url}/docs/api`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    const html = await page.text()
    expect(html).toContain('src="/docs/api/reference.js"')
    expect(html).not.toMatch(/https?:\/\//)
    expect(html).toContain('href="/docs/api/reference.css"')
    for (const [path, type] of [["/docs/api/reference.js", "javascript"], ["/docs/api/reference.css", "text/css"], ["/docs/api/start.js", "javascript"]] as const) {
      const asset = await fetch(`${gw.url}${path}`)
      expect(asset.status, path).toBe(200)
      expect(asset.headers.get("content-type"), path).toContain(type)
      expect((await asset.text()).length, path).toBeGreaterThan(100)
    }
    // The start script points the renderer at this gateway's document and switches off the online validator.
    const start = await (await fetch(`${gw.url}/docs/api/start.js`)).text()
    expect(start).toContain('url: "/api/v1/openapi.json"')
    expect(start).toContain("validatorUrl: null")

    const browser = await launchChromium()
    try {
      const context = await browser.newContext()
      const elsewhere: Array<string> = []
      await context.route("**/*", (route) => {
        const url = route.request().url()
        if (url.startsWith(gw.url) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue()
        elsewhere.push(url)
        return route.abort()
      })
      const tab = await context.newPage()
      const errors: Array<string> = []
      tab.on("pageerror", (e) => errors.push(e.message))
      await tab.goto(`${gw.url}/docs/api`)
      // Operation summaries from the document, rendered by Swagger UI.
      await tab.getByText("Relay an OpenAI-style chat completion").first().waitFor({ timeout: 60_000 })
      await tab.getByRole("heading", { name: "Privacy Relay gateway" }).first().waitFor({ timeout: 10_000 })
      // A tag's operations are listed once the document is parsed (the relay route's path appears in the page).
      await tab.getByText("/api/v1/chat/completions").first().waitFor({ timeout: 10_000 })
      expect(elsewhere).toEqual([])
      expect(errors).toEqual([])
    } finally {
      await browser.close()
    }
  })
})
