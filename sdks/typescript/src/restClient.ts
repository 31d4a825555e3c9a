/**
 * The REST capability set on its own, without the on-device engine: for dashboards and scripts that manage keys,
 * receipts, webhooks and billing but never relay a prompt (the gateway's portal is one). Same gateway lock as the
 * RelayClient: nothing with a credential leaves before the URL answered the gateway identity probe.
 */
import { parseGatewayUrl, probeGateway } from "./client/gatewayUrl.ts"
import { ProxyStartError } from "./client/ProxyStartError.ts"
import { ConfigurationError, GatewayIdentityError } from "./errors.ts"
import { type PortalSession, RestApi } from "./rest.ts"
import { createTransport, DEFAULT_RETRY_POLICY } from "./transport.ts"
import { createJwksCache } from "./verify/jwks.ts"
import { verifyReceipt } from "./verify/receipt.ts"

export interface RestClientOptions {
  /** The gateway's base URL: https, or http to a loopback address for development. */
  readonly gatewayUrl: string
  /** The gateway key (`svc_...`), for the routes that take one (self, countersign). */
  readonly apiKey?: string
  /** A portal token (`spt_...`) for the portal routes. */
  readonly portalToken?: string
  /** Or a signed-in portal session (a page served by the gateway): cookies plus the CSRF token on writes. */
  readonly portalSession?: PortalSession
  readonly retries?: number
  readonly timeoutMs?: number
  readonly fetch?: typeof fetch
}

export const createRestClient = (options: RestClientOptions): RestApi => {
  let gatewayUrl: string
  try {
    gatewayUrl = parseGatewayUrl(options.gatewayUrl)
  } catch (error) {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: (error as Error).message.replaceAll("GATEWAY_URL", "gatewayUrl"), cause: error })
  }
  if (options.apiKey !== undefined && !/^svc_[a-z2-7]+$/.test(options.apiKey)) {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: "apiKey is not a gateway key (svc_...)." })
  }
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
  const transport = createTransport(fetchImpl, { ...DEFAULT_RETRY_POLICY, retries: options.retries ?? DEFAULT_RETRY_POLICY.retries }, options.timeoutMs ?? 60_000)
  const jwks = createJwksCache({ gatewayUrl, fetch: fetchImpl })
  let identity: Promise<void> | undefined
  const ready = () =>
    (identity ??= probeGateway(gatewayUrl, { fetch: fetchImpl }).catch((error) => {
      identity = undefined
      const message = error instanceof ProxyStartError ? error.message.replaceAll("GATEWAY_URL", "gatewayUrl") : String(error)
      throw new GatewayIdentityError({ status: 0, code: "gateway_identity_failed", message, cause: error })
    }))
  return new RestApi({
    gatewayUrl,
    transport,
    apiKey: () => {
      if (options.apiKey === undefined) throw new ConfigurationError({ status: 0, code: "configuration_error", message: "This call needs a gateway key: give apiKey." })
      return options.apiKey
    },
    portalToken: options.portalToken,
    portalSession: options.portalSession,
    verify: (envelope) => verifyReceipt(envelope as object, { jwks }),
    ready
  })
}
