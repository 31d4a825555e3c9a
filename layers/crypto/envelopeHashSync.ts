// The receipt chain's envelope hash (sdks/typescript/src/wire/receipts/chain.ts envelopeHash: SHA-256 hex of the JCS bytes of the
// whole envelope, signature included), computed synchronously with node:crypto for the sealer's hot path.
// Same definition, same result; only the digest backend differs.
import { jcsSha256HexSync } from "./nodeSha256.ts"

/** The next receipt's `prev_hash` for `envelope`; equals `await envelopeHash(envelope)`. */
export const envelopeHashSync = (envelope: object): string => jcsSha256HexSync(envelope)
