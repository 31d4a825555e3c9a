// Receipt chain primitives: ids, genesis link, envelope hash and the per-receipt identifiers.
import { bytesToHex } from "../crypto/hex.ts"
import { jcsSha256Hex } from "../crypto/jcs.ts"

/** The `prev_hash` of the first receipt (seq 1) of every chain. */
export const GENESIS_PREV_HASH = "0".repeat(64)

export interface ChainLink {
  readonly chain_id: string
  /** Starts at 1 and increases by one per receipt in the chain. */
  readonly seq: number
  /** envelopeHash of the previous receipt in the same chain; GENESIS_PREV_HASH for seq 1. */
  readonly prev_hash: string
}

/** Chain of completed-call v2 receipts of an organisation. */
export const v2ChainId = (orgId: string): string => `receipt-v2-org-${orgId}`
/** Chain of v1 receipts (the stored chain) of an account. */
export const v1ChainId = (accountId: string): string => `tenant-${accountId}`
/** Chain of failed-call receipts of an organisation. */
export const failedChainId = (orgId: string): string => `failed-v2-org-${orgId}`

/**
 * SHA-256 hex of the JCS bytes of the whole envelope, signature included: the next receipt's
 * `prev_hash`. Including the signature means a re-signed receipt breaks the link too.
 */
export const envelopeHash = (envelope: object): Promise<string> => jcsSha256Hex(envelope)

/**
 * Random bytes for ids, drawn from a pool refilled 4 KiB at a time (each byte handed out once): a `getRandomValues`
 * call per id cost ~2.5 us, a pooled one ~0.2 us (issue 41: the local proxy signs an attestation per call, the gateway
 * its receipts).
 */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let poolOffset = POOL_BYTES

const randomBytes = (length: number): Uint8Array => {
  if (poolOffset + length > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool)
    poolOffset = 0
  }
  const bytes = pool.subarray(poolOffset, poolOffset + length)
  poolOffset += length
  return bytes
}

/** 128 random bits as 32 lowercase hex characters (receipt and attestation `jti`). */
export const newJti = (): string => bytesToHex(randomBytes(16))

/** RFC 3339 UTC timestamp with millisecond precision and `Z`, e.g. 2024-01-02T03:04:05.006Z. */
export const rfc3339Millis = (date: Date): string => date.toISOString()

/** Unix seconds of a date (what `iat` carries). */
export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000)
