/**
 * HMAC-SHA256 for alias tags on node:crypto (Node-only; the local proxy's tokeniser, on its own thread and in its
 * workers). WebCrypto's (the tokeniser's portable default) imports a key per request and runs each MAC as a
 * thread-pool job behind a promise, ~40 us each on a short request; this one runs on the calling thread in a few
 * microseconds and gives the same bytes, so the aliases are the same (issue 41: the local proxy's CPU per call).
 */
import { createHmac } from "node:crypto"
import type { HmacSha256 } from "../tokeniser/session.ts"

export const nodeHmacSha256: HmacSha256 = (secret, message) => createHmac("sha256", secret).update(message).digest()
