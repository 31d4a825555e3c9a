import { readdirSync, readFileSync } from "node:fs"
import { dirname, relative, resolve, sep } from "node:path"
import { describe, expect, it } from "vitest"
import { importSpecifiers, REPO_ROOT } from "../support/importGraph.ts"

/**
 * Services fail with their own tagged errors; only the HTTP layer (layers/http, with layers/http/domainErrors.ts the
 * one place that maps a service's error to a status and a code) knows HTTP. So no service interface (services/) and no
 * implementation of one (the storage, provider, mail, payment and webhook layers, the `*Live` layers but those that
 * compose routes: GatewayLive, ReceiptsLive) imports the HTTP error (src/http/ApiError.ts) or anything of layers/http.
 */
const DOMAIN_FOLDERS = ["services", "layers/pg", "layers/memory", "layers/redis", "layers/providers", "layers/mail", "layers/payments", "layers/webhooks", "layers/crypto", "layers/sso"]
const DOMAIN_LIVE_LAYERS = [
  "layers/KeyEncryptionLive.ts",
  "layers/RelayLimitsLive.ts",
  "layers/WebhookDispatcherLive.ts",
  "layers/WebhooksLive.ts",
  "layers/Bootstrap.ts",
  "layers/KeyedBatcher.ts",
  "layers/StartupFailure.ts",
  "layers/TenantSerialiser.ts",
  "layers/AdminOperations.ts",
  "layers/AdminDirectory.ts",
  "layers/AdminErrors.ts",
  "layers/oidc/OidcAdapter.ts",
  "layers/oidc/atRest.ts",
  "layers/oidc/clients.ts",
  "layers/oidc/loginForm.ts"
]

/**
 * The HTTP edge, where ApiError belongs: the routes (layers/http), the layers that compose them (GatewayLive,
 * ReceiptsLive, the OIDC provider's routes and its Node request handler, which answers OAuth requests itself) and the relay pipeline (layers/relay), which speaks the clients' wire formats
 * and answers with the status codes and error bodies the API defines for them (docs/decisions.md, "The relay pipeline
 * is the HTTP edge").
 */
const HTTP_EDGE = ["layers/http/", "layers/relay/", "layers/GatewayLive.ts", "layers/ReceiptsLive.ts", "layers/oidc/OidcRoutes.ts", "layers/oidc/OidcProvider.ts"]

/**
 * Not held yet: files that build ApiError themselves or through the request validators of src/http/validate.ts, each
 * to move to the held lists once it fails with tagged errors mapped in domainErrors.ts. Empty since the operator
 * commands (AdminOperations, AdminDirectory, oidc/clients, sso/configureSso) fail with layers/AdminErrors.ts.
 */
const NOT_HELD_YET: ReadonlyArray<string> = []

/** Services not converted yet (issue 33 item 4): each leaves this list when it fails with its own errors. */
const PENDING = new Set<string>([])

const toRepoPath = (absolute: string) => relative(REPO_ROOT, absolute).split(sep).join("/")

const domainFiles = () => [
  ...DOMAIN_FOLDERS.flatMap((folder) =>
    readdirSync(resolve(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => `${folder}/${name.split(sep).join("/")}`)
  ),
  ...DOMAIN_LIVE_LAYERS
]

/** The HTTP modules a file imports (relative imports resolved against the file). */
const httpImportsOf = (file: string) =>
  importSpecifiers(readFileSync(resolve(REPO_ROOT, file), "utf8"))
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => toRepoPath(resolve(dirname(resolve(REPO_ROOT, file)), specifier)))
    .filter(isHttpModule)

const isHttpModule = (path: string) => path === "src/http/ApiError.ts" || path.startsWith("layers/http/")

/**
 * Effect's HTTP server side: a request, a response, a router, an HTTP API. A service interface takes plain values
 * (PortalSessions.fromCredentials takes the cookies, the CSRF header and the method, read off the request by
 * layers/http/sessionCredentials.ts), so services/ imports nothing of effect/http or effect/http-api; an implementation
 * may call out with an HTTP client, but never handles a server request or builds a response.
 */
const EFFECT_HTTP_SPECIFIER = /^effect\/http(?:-api)?(?:\/|$)/
const SERVER_SIDE_NAME = /^(?:HttpServer\w*|HttpRouter|HttpMiddleware|HttpApi\w*|HttpEffect|HttpStaticServer)$/
const IMPORT_CLAUSE = /\bimport\s+(?:type\s+)?([^"'`;]*?)\s*from\s*["']([^"']+)["']/g

/** The effect/http bindings a source names that a file of `folder` may not import (a whole specifier for services/). */
const effectHttpServerImportsOf = (source: string, isServiceInterface: boolean) =>
  [...source.matchAll(IMPORT_CLAUSE)].flatMap(([, clause, specifier]) => {
    if (!EFFECT_HTTP_SPECIFIER.test(specifier!)) return []
    if (isServiceInterface || specifier!.startsWith("effect/http-api")) return [specifier!]
    const subpath = specifier!.slice("effect/http/".length)
    if (subpath !== "" && SERVER_SIDE_NAME.test(subpath)) return [specifier!]
    const names = (clause!.match(/\{([^}]*)\}/)?.[1] ?? "").split(",").map((name) => name.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!)
    const namespace = /\*\s+as\s+\w+/.test(clause!) ? ["*"] : []
    return [...namespace, ...names.filter((name) => SERVER_SIDE_NAME.test(name))].map((name) => `${specifier} ${name}`)
  })

const effectHttpImportsOfFile = (file: string) =>
  effectHttpServerImportsOf(readFileSync(resolve(REPO_ROOT, file), "utf8"), file.startsWith("services/"))

describe("services speak no HTTP (architecture)", () => {
  it("no domain service or its implementation imports ApiError or the HTTP layer", () => {
    const files = domainFiles()
    // The walk really lists the services and their layers (an empty list would pass vacuously).
    expect(files).toContain("services/Keys.ts")
    expect(files).toContain("layers/pg/Keys.ts")
    expect(files).toContain("layers/RelayLimitsLive.ts")
    expect(files).toContain("layers/providers/ProviderRouterLive.ts")
    const offenders = files.filter((file) => httpImportsOf(file).length > 0)
    expect(offenders.filter((file) => !PENDING.has(file))).toEqual([])
    // A converted service leaves PENDING, so the list cannot hide a service that imports ApiError again.
    expect([...PENDING].filter((file) => !offenders.includes(file))).toEqual([])
  })

  it("no service interface imports effect's HTTP modules; no implementation imports its server side", () => {
    const offenders = domainFiles().flatMap((file) => effectHttpImportsOfFile(file).map((binding) => `${file}: ${binding}`))
    expect(offenders).toEqual([])
  })

  it("the effect/http check sees a request, a response or a router imported (it can fail)", () => {
    expect(effectHttpServerImportsOf(`import type { HttpServerRequest } from "effect/http"`, true)).toEqual(["effect/http"])
    expect(effectHttpServerImportsOf(`import { HttpClient } from "effect/http"`, true)).toEqual(["effect/http"])
    expect(effectHttpServerImportsOf(`import { HttpClient, type HttpServerRequest as R } from "effect/http"`, false)).toEqual(["effect/http HttpServerRequest"])
    expect(effectHttpServerImportsOf(`import { HttpRouter, HttpServerResponse } from "effect/http"`, false)).toEqual(["effect/http HttpRouter", "effect/http HttpServerResponse"])
    expect(effectHttpServerImportsOf(`import * as Http from "effect/http"`, false)).toEqual(["effect/http *"])
    expect(effectHttpServerImportsOf(`import { HttpApi } from "effect/http-api"`, false)).toEqual(["effect/http-api"])
    expect(effectHttpServerImportsOf(`import { HttpClient } from "effect/http"`, false)).toEqual([])
    expect(effectHttpServerImportsOf(`import { SqlClient } from "effect/sql"`, true)).toEqual([])
    // It reads real files: the HTTP layer's reading of the session credentials is seen.
    expect(effectHttpImportsOfFile("layers/http/sessionCredentials.ts")).toEqual(["effect/http HttpServerRequest"])
  })

  it("every file under layers/ is either held to no ApiError, the HTTP edge, or listed as not held yet", () => {
    const layers = readdirSync(resolve(REPO_ROOT, "layers"), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => `layers/${name.split(sep).join("/")}`)
    const held = new Set(domainFiles())
    const inGroup = (group: ReadonlyArray<string>, file: string) => group.some((entry) => entry.endsWith("/") ? file.startsWith(entry) : file === entry)
    const groupsOf = (file: string) =>
      [held.has(file) ? "held" : [], inGroup(HTTP_EDGE, file) ? "edge" : [], inGroup(NOT_HELD_YET, file) ? "not held yet" : []].flat()
    expect(layers).toContain("layers/relay/relayCall.ts")
    // A new layer file must be placed in exactly one group, so nothing escapes the check by being forgotten.
    expect(layers.filter((file) => groupsOf(file).length !== 1).map((file) => `${file}: ${groupsOf(file).join(", ") || "in no group"}`)).toEqual([])
  })

  it("the check sees an import of ApiError (it can fail)", () => {
    expect(httpImportsOf("layers/oidc/OidcProvider.ts")).toContain("src/http/ApiError.ts")
    expect(isHttpModule("layers/http/domainErrors.ts")).toBe(true)
    expect(isHttpModule("services/Keys.ts")).toBe(false)
  })
})
