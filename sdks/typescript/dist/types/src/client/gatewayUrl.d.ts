export declare const GATEWAY_IDENTITY_PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks";
/**
 * Parses GATEWAY_URL into a base URL without a trailing slash (an origin, optionally with a path
 * prefix). Throws a ProxyStartError naming the rule that failed.
 */
export declare const parseGatewayUrl: (raw: string | undefined) => string;
/**
 * Checks that `baseUrl` is a Privacy Relay gateway: its identity probe answers 200 with a JWKS whose
 * keys are P-256 public keys. A provider (or anything else) fails this, so the proxy refuses to start.
 */
export declare const probeGateway: (baseUrl: string, options?: {
    readonly fetch?: typeof fetch;
    readonly timeoutMs?: number;
}) => Promise<void>;
