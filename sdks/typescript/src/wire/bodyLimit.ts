/**
 * The largest request body the gateway reads and the local proxy accepts: 8 MiB. One number for both, so
 * the proxy refuses an oversized prompt at once (413 `payload_too_large`) instead of tokenising it for
 * minutes and then having the gateway refuse it. In the wire because it is part of the contract between the
 * two, and the wire is the one part of the SDK the gateway may import.
 */
export const MAX_REQUEST_BODY_BYTES = 8 * 1024 * 1024
