import { createHash } from "node:crypto"

/** SHA-256 hex of a secret, the only form in which keys and tokens are stored (sync: it is on the hot path). */
export const sha256HexSync = (s: string) => createHash("sha256").update(s).digest("hex")
