// The bytes every envelope signature (v1, v2, failed v2, v3) covers: the JCS bytes of the envelope
// with both `sig` and `signature` removed. One function so signers and verifiers cannot disagree.
import { canonicalBytes } from "../crypto/jcs.ts"

export const signingInput = (envelope: object): Uint8Array => {
  const { sig: _sig, signature: _signature, ...unsigned } = envelope as Record<string, unknown>
  return canonicalBytes(unsigned)
}
