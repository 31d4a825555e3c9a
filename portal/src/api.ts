// How the portal talks to its gateway: same origin, the signed-in session's cookies, and the CSRF token (the readable
// `pr_csrf` cookie) echoed on every write. Keys, receipts, webhooks and billing go through the SDK's REST client;
// the account and session routes, which only a browser page uses, through `call` below.
import { createJwksCache, createRestClient, type GatewayResponse, RelayError } from "@privacy-relay/sdk"

const CSRF_COOKIE = "pr_csrf"

export const csrfToken = (): string | undefined => {
  for (const part of document.cookie.split(";")) {
    const [name, ...value] = part.trim().split("=")
    if (name === CSRF_COOKIE) return decodeURIComponent(value.join("="))
  }
  return undefined
}

export const rest = createRestClient({ gatewayUrl: location.origin, portalSession: { csrfToken }, retries: 1, timeoutMs: 30_000 })

/** A refusal from the gateway, with its stable code, in words a person can act on. */
export class Problem extends Error {
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

export const call = async <A = any>(method: string, path: string, body?: unknown): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (body !== undefined) headers["content-type"] = "application/json"
  const token = csrfToken()
  if (method !== "GET" && token !== undefined) headers["x-csrf-token"] = token
  let response: Response
  try {
    response = await fetch(path, { method, headers, credentials: "same-origin", ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  } catch {
    throw new Problem(0, "network_error", "The gateway cannot be reached. Check your connection and try again.")
  }
  const text = await response.text()
  const json = text === "" ? {} : safeJson(text)
  if (!response.ok) {
    const error = (json as { error?: { code?: string; message?: string } }).error
    throw new Problem(response.status, error?.code ?? "http_error", error?.message ?? `The gateway answered ${response.status}.`)
  }
  return json as A
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return {}
  }
}

/** What to show a person for any failure of a call. */
export const describeError = (error: unknown): { code: string; message: string; signedOut: boolean } => {
  if (error instanceof Problem) return { code: error.code, message: error.message, signedOut: error.status === 401 }
  if (error instanceof RelayError) return { code: error.code, message: error.message, signedOut: error.status === 401 }
  return { code: "unexpected", message: error instanceof Error ? error.message : String(error), signedOut: false }
}

/** The signed-in person (GET /api/v1/account), as the gateway's OpenAPI document types it. */
export type Account = GatewayResponse<"getAccount">

export const account = {
  me: () => call<Account>("GET", "/api/v1/account"),
  signUp: (input: { email: string; password: string; organisation_name?: string }) =>
    call<GatewayResponse<"signUp", 201>>("POST", "/api/v1/accounts", input),
  resendVerification: (email: string) => call("POST", "/api/v1/account/verification", { email }),
  verify: (token: string, password?: string) =>
    call<{ verified: boolean; trial_credited: boolean }>("POST", "/api/v1/account/verify", password === undefined ? { token } : { token, password }),
  signIn: (input: { email: string; password: string }) => call("POST", "/api/v1/portal/login", input),
  signOut: () => call("POST", "/api/v1/portal/logout", {})
}

export const can = (me: Account | undefined, ability: string) =>
  me !== undefined && (me.abilities.includes(ability) || me.abilities.includes("ability:admin"))

/** The gateway's receipt keys, fetched once (again on an unknown kid): every verification in the portal is local. */
export const jwks = createJwksCache({ gatewayUrl: location.origin })
