/**
 * Anonymous demo keys (docs/demo.md): what the gateway grants to `POST /api/v1/demo/key` and what such a key may do.
 * They are metered and debited like any key but never sealed: no receipt headers, no stream trailer, no chain entry,
 * no `receipt.signed` event, no failed-call receipt. They may call the relay routes (and list models) only.
 */
export const DEMO_TIER = "demo"
/** The demo's whole budget, credited when the key is issued. */
export const DEMO_CREDIT_MICROS = 2_000_000n
export const DEMO_KEY_LIFETIME_MS = 24 * 3_600_000
/** At most this many demo keys per network per day (429 `rate_limited` beyond). */
export const DEMO_KEYS_PER_NETWORK_PER_DAY = 2

/** Whether a key's calls are sealed into receipts: every key but a demo key. */
export const issuesReceipts = (principal: { readonly tier: string }) => principal.tier !== DEMO_TIER
