/**
 * Gateway-locked base URL (docs/proxy.md, the gateway identity probe): a client component talks only to a gateway, never to
 * a provider. The URL must be https, or plain http to a loopback address for development (the rule is
 * ../wire/config/gatewayUrl.ts, shared with the starter kit), and the host must answer the gateway identity probe
 * `GET /api/.well-known/service-receipt-pubkeys.jwks` with a JWKS of P-256 receipt keys. There is no provider-URL setting anywhere.
 */
import { parseGatewayUrl as gatewayUrlRule } from "../wire/config/gatewayUrl.ts"
import { ConfigInvalid } from "../wire/config/setting.ts"
import { isPublicJwk } from "../wire/crypto/ecdsa.ts"
import type { Jwks } from "../wire/receipts/jwks.ts"
import { ProxyStartError } from "./ProxyStartError.ts"

export const GATEWAY_IDENTITY_PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks"

/**
 * Parses GATEWAY_URL into a base URL without a trailing slash (an origin, optionally with a path prefix): the rule of
 * ../wire/config/gatewayUrl.ts, its refusal as a ProxyStartError (what the SDK's clients and programs throw).
 */
export const parseGatewayUrl = (raw: string | undefined): string => {
  try {
    return gatewayUrlRule(raw)
  } catch (error) {
    throw error instanceof ConfigInvalid ? new ProxyStartError(error.message) : error
  }
}

/**
 * Checks that `baseUrl` is a Privacy Relay gateway: its identity probe answers 200 with a JWKS whose
 * keys are P-256 public keys. A provider (or anything else) fails this, so the proxy refuses to start.
 */
export const probeGateway = async (
  baseUrl: string,
  options: { readonly fetch?: typeof fetch; readonly timeoutMs?: number } = {}
): Promise<void> => {
  await probeGatewayKeys(baseUrl, options)
}

/** probeGateway that also returns what the probe read: the gateway's receipt keys (its JWKS). */
export const probeGatewayKeys = async (
  baseUrl: string,
  options: { readonly fetch?: typeof fetch; readonly timeoutMs?: number } = {}
): Promise<Jwks> => {
  const probeUrl = `${baseUrl}${GATEWAY_IDENTITY_PROBE_PATH}`
  const notAGateway = (why: string) =>
    new ProxyStartError(
      `GATEWAY_URL ${baseUrl} is not a Privacy Relay gateway: ${why} at GET ${GATEWAY_IDENTITY_PROBE_PATH}. Client components only talk to a gateway, never to a provider.`,
      "not_a_gateway"
    )
  let response: Response
  try {
    response = await (options.fetch ?? fetch)(probeUrl, {
      headers: { accept: "application/json" },
      redirect: "error",
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000)
    })
  } catch (error) {
    // fetch's own message is just "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a timeout) is in its cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
    const reason = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : ""
    throw new ProxyStartError(
      `GATEWAY_URL ${baseUrl} cannot be reached: ${(error as Error).message}${reason === "" ? "" : ` (${reason})`}. Is the gateway running, and is the URL right?`,
      "gateway_unreachable"
    )
  }
  if (response.status !== 200) {
    await response.body?.cancel()
    throw notAGateway(`status ${response.status}`)
  }
  let jwks: unknown
  try {
    jwks = await response.json()
  } catch {
    throw notAGateway("the answer is not JSON")
  }
  const keys = (jwks as { keys?: unknown } | null)?.keys
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every(isPublicJwk)) {
    throw notAGateway("the answer is not a JWKS of P-256 receipt keys")
  }
  // The gateway's receipt keys: a client verifying receipts can use them rather than fetch them again.
  return jwks as Jwks
}
