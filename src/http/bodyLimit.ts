/**
 * The largest request body the gateway reads and the local proxy accepts: 8 MiB. One number for both, so
 * the proxy refuses an oversized prompt at once (413 `payload_too_large`) instead of tokenising it for
 * minutes and then having the gateway refuse it. Here in src/http because the gateway may import neither
 * the proxy (src/proxy) nor the SDK's engine (sdks/typescript/src/tokeniser, sdks/typescript/src/client).
 */
export const MAX_REQUEST_BODY_BYTES = 8 * 1024 * 1024
