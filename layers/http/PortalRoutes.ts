import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFile, stat } from "node:fs/promises"
import { extname, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { AppConfig } from "../../services/AppConfig.ts"
import { ApiError, notFound } from "../../src/http/ApiError.ts"
import { apiErrorResponse } from "./errorResponse.ts"

/** Where `npm run portal:build` writes the portal (PORTAL_DIR overrides it). */
export const DEFAULT_PORTAL_DIR = fileURLToPath(new URL("../../portal/dist/", import.meta.url))

/** The directory the portal is served from, with a trailing separator. */
export const portalRoot = (configured: string | undefined) => {
  return resolve(configured ?? DEFAULT_PORTAL_DIR) + sep
}

/** Whether a portal build is there to serve (its index.html exists). */
export const isPortalBuilt = (root: string) => Effect.promise(() => stat(`${root}index.html`).then((s) => s.isFile(), () => false))

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webmanifest": "application/manifest+json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2"
}

/**
 * The page may load and call only its own origin: no inline script, no third-party anything, never framed.
 * Chart.js sizes its canvas through the style property (CSSOM), which a style-src policy does not restrict.
 */
const PORTAL_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const PAGE_HEADERS = {
  "content-security-policy": PORTAL_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

/** Built asset names carry a content hash (Vite's `assets/<name>-<hash>.<ext>`): they never change. */
const IMMUTABLE = "public, max-age=31536000, immutable"

export const portalNotBuilt = (dir: string) =>
  new ApiError({
    status: 404,
    code: "portal_not_built",
    message: `The portal has not been built on this gateway (no ${dir}index.html). Build it with \`npm run portal:build\`, then reload.`
  })

const notBuiltPage = (error: ApiError) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><meta charset="utf-8"><title>Portal not built</title>` +
      `<main><h1>The portal is not built yet</h1><p>Run <code>npm run portal:build</code> in the gateway's directory, then reload this page.</p>` +
      `<p>Error code: <code>${error.code}</code></p></main></html>`,
    { status: error.status, contentType: "text/html; charset=utf-8", headers: { ...PAGE_HEADERS, "cache-control": "no-store" } }
  )

const readIfFile = (path: string) =>
  Effect.promise(async () => {
    try {
      if (!(await stat(path)).isFile()) return undefined
      return await readFile(path)
    } catch {
      return undefined
    }
  })

/**
 * The portal's built files at `/portal/` (same origin as the API, so its session cookie and CSRF token just work).
 * Hashed assets are cached for a year; index.html is revalidated every time, so a new build shows at once. Any other
 * path without a file extension is a page of the single-page app and gets index.html; a missing file with an
 * extension is 404 `not_found`. Without a build every path answers 404 `portal_not_built` (a page for a browser).
 */
export const PortalRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const root = portalRoot((yield* AppConfig).settings.portalDir)

  const serve = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pathname = new URL(request.url, "http://portal").pathname
    // `/portal` itself: the app's relative asset URLs need the trailing slash.
    if (pathname === "/portal") return HttpServerResponse.redirect("/portal/", { status: 308 })
    let relative: string
    try {
      relative = decodeURIComponent(pathname.slice("/portal/".length))
    } catch {
      return apiErrorResponse(notFound())
    }
    const index = yield* readIfFile(`${root}index.html`)
    if (index === undefined) {
      const error = portalNotBuilt(root)
      return (request.headers["accept"] ?? "").includes("text/html") ? notBuiltPage(error) : apiErrorResponse(error)
    }
    const target = resolve(root, relative)
    const inside = (target.startsWith(root) || `${target}${sep}` === root) && !relative.includes("\0")
    const extension = extname(relative).toLowerCase()
    if (inside && relative !== "" && extension !== "") {
      const body = yield* readIfFile(target)
      if (body === undefined) return apiErrorResponse(notFound())
      const hashed = relative.startsWith("assets/")
      return HttpServerResponse.uint8Array(body, {
        contentType: CONTENT_TYPES[extension] ?? "application/octet-stream",
        headers: { "cache-control": hashed ? IMMUTABLE : "no-cache", "x-content-type-options": "nosniff" }
      })
    }
    if (!inside || extension !== "") return apiErrorResponse(notFound())
    return HttpServerResponse.uint8Array(index, {
      contentType: CONTENT_TYPES[".html"],
      headers: { ...PAGE_HEADERS, "cache-control": "no-cache" }
    })
  })

  yield* router.add("GET", "/portal/*", serve)
}))
