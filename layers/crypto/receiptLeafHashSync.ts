// The transparency log's leaf hash (sdks/typescript/src/wire/receipts/merkle.ts receiptLeafHash: SHA-256 of 0x00 followed by
// the 32 bytes a receipt's envelope hash names), computed synchronously with node:crypto for the sequencer, which
// hashes every receipt the gateway seals. Same definition, same result; only the digest backend differs (the
// portable one is a WebCrypto thread-pool job and a promise per leaf).
import { createHash } from "node:crypto"
import { hexToBytes } from "../../sdks/typescript/src/wire/crypto/hex.ts"

const LEAF_PREFIX = new Uint8Array([0x00])

/** The leaf hash of a receipt, as lowercase hex; equals `bytesToHex(await receiptLeafHash(envelopeHashHex))`. */
export const receiptLeafHashHexSync = (envelopeHashHex: string): string =>
  createHash("sha256").update(LEAF_PREFIX).update(hexToBytes(envelopeHashHex)).digest("hex")
