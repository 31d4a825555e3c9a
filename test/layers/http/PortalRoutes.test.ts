// The gateway serves the built portal at /portal/: content types, cache headers, the single-page fallback, no path
// outside the build, and a clear 404 `portal_not_built` before `npm run portal:build` ran. The route reads the
// build directory per request, so one gateway covers "not built" and then "built".
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
const dir = mkdtempSync(join(tmpdir(), "pr-portal-dist-"))
beforeAll(async () => {
  gw = await startTestGateway({ PORTAL_DIR: dir })
})
afterAll(() => gw.close())

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, { headers, redirect: "manual" })

describe("before the portal is built", () => {
  it("answers 404 portal_not_built: JSON for a script, a page saying how to build for a browser", async () => {
    const api = await get("/portal/")
    expect(api.status).toBe(404)
    const body = await api.json()
    expect(body.error.code).toBe("portal_not_built")
    expect(body.error.message).toContain("npm run portal:build")

    const page = await get("/portal/keys", { accept: "text/html,application/xhtml+xml" })
    expect(page.status).toBe(404)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("cache-control")).toBe("no-store")
    const html = await page.text()
    expect(html).toContain("npm run portal:build")
    expect(html).toContain("portal_not_built")
  })
})

describe("after the portal is built", () => {
  beforeAll(() => {
    mkdirSync(join(dir, "assets"), { recursive: true })
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>portal</title><script type=module src=/portal/assets/index-AbC123.js></script>")
    writeFileSync(join(dir, "assets", "index-AbC123.js"), "console.log('portal')")
    writeFileSync(join(dir, "assets", "index-AbC123.css"), "body{}")
    writeFileSync(join(dir, "robots.txt"), "User-agent: *\nDisallow: /\n")
    // A file beside the build that must never be reachable through /portal/.
    writeFileSync(join(dir, "..", "pr-portal-secret.txt"), "not for the web")
  })

  it("serves index.html at /portal/ with the page's security headers, revalidated on every load", async () => {
    const res = await get("/portal/")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(res.headers.get("cache-control")).toBe("no-cache")
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'")
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(await res.text()).toContain("<title>portal</title>")
  })

  it("answers any page path without an extension with index.html (the app routes it)", async () => {
    for (const path of ["/portal/keys", "/portal/receipts/0123456789abcdef0123456789abcdef", "/portal/webhooks/deliveries/7"]) {
      const res = await get(path)
      expect(res.status, path).toBe(200)
      expect(await res.text()).toContain("<title>portal</title>")
    }
  })

  it("serves hashed assets with their content type, cached for a year; other files revalidated", async () => {
    const js = await get("/portal/assets/index-AbC123.js")
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(await js.text()).toBe("console.log('portal')")
    const css = await get("/portal/assets/index-AbC123.css")
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    const robots = await get("/portal/robots.txt")
    expect(robots.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(robots.headers.get("cache-control")).toBe("no-cache")
  })

  it("answers 404 not_found for a missing file, never index.html", async () => {
    const res = await get("/portal/assets/index-missing.js")
    expect(res.status).toBe(404)
    expect((await res.json()).error.code).toBe("not_found")
  })

  it("never serves a file outside the build directory", async () => {
    for (const path of ["/portal/..%2fpr-portal-secret.txt", "/portal/%2e%2e/pr-portal-secret.txt", "/portal/assets/..%2f..%2fpr-portal-secret.txt", "/portal/%00.js", "/portal/%E0%A4%A.js"]) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(await res.text(), path).not.toContain("not for the web")
    }
  })

  it("sends a browser that opens a verification link to the portal's page without using the link up", async () => {
    const email = "link-in-browser@example.org"
    const signUp = await fetch(`${gw.url}/api/v1/accounts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: "long enough password" }) })
    expect(signUp.status).toBe(201)
    const mail = await gw.query<{ body_text: string }>("SELECT body_text FROM mail_outbox WHERE to_address = $1", email)
    const link = new URL(/(http\S+\/api\/v1\/account\/verify\?token=[A-Za-z0-9_-]+)/.exec(mail[0].body_text)![1])
    const token = link.searchParams.get("token")!
    const opened = await get(`${link.pathname}${link.search}`, { accept: "text/html,application/xhtml+xml,*/*;q=0.8" })
    expect(opened.status).toBe(303)
    expect(opened.headers.get("location")).toBe(`/portal/verify?token=${token}`)
    expect(opened.headers.get("cache-control")).toBe("no-store")
    expect(await gw.query("SELECT email_verified FROM accounts WHERE email = $1", email)).toEqual([{ email_verified: false }])
    // The page then verifies with the token (POST); a script's GET still verifies directly as before.
    const verified = await fetch(`${gw.url}/api/v1/account/verify`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) })
    expect(verified.status).toBe(200)
    expect(await gw.query("SELECT email_verified FROM accounts WHERE email = $1", email)).toEqual([{ email_verified: true }])
  })

  it("redirects /portal to /portal/ (the app's relative URLs need the slash)", async () => {
    const res = await get("/portal")
    expect(res.status).toBe(308)
    expect(res.headers.get("location")).toBe("/portal/")
  })
})
