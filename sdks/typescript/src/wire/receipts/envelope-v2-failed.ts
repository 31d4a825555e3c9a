// The failed-call receipt (X-Service-Receipt-Failed): a v2-shaped envelope for an authenticated call
// that ended with status >= 400. It has `outcome: "failed"`, `error_code` and `status`, no token
// counts, and its own chain `failed-v2-org-<org_id>`. Members that may not exist for a failure
// (nothing routed, nothing forwarded, no provider response) are present as null rather than absent,
// so a reader sees the failure point explicitly.
import type { ChainLink } from "./chain.ts"
import { signEnvelope, type Signer } from "./signer.ts"

export interface FailedReceiptV2 {
  readonly v: 2
  readonly alg: "ES256"
  readonly kid: string
  readonly iss: string
  readonly jti: string
  readonly iat: number
  readonly timestamp: string
  readonly outcome: "failed"
  /** HTTP status the client received. */
  readonly status: number
  /** The `error.code` the client received. */
  readonly error_code: string
  /** Provider response id, when the provider answered. */
  readonly request_id: string | null
  /** Provider and model, when routing had happened. */
  readonly provider: string | null
  readonly model: string | null
  /** Present when a body was forwarded upstream / a response came back. */
  readonly hash_upstream_request: string | null
  readonly hash_upstream_response: string | null
  /** chain_id `failed-v2-org-<org_id>`. */
  readonly chain: ChainLink
  readonly signature: string
  readonly sig: string
  readonly extensions: { readonly request_id: string }
}

export type UnsignedFailedReceiptV2 = Omit<FailedReceiptV2, "v" | "alg" | "kid" | "outcome" | "signature" | "sig">

export const signFailedReceiptV2 = async (
  unsigned: UnsignedFailedReceiptV2,
  signer: Signer
): Promise<FailedReceiptV2> => {
  const body = {
    v: 2 as const,
    alg: "ES256" as const,
    kid: signer.kid,
    iss: unsigned.iss,
    jti: unsigned.jti,
    iat: unsigned.iat,
    timestamp: unsigned.timestamp,
    outcome: "failed" as const,
    status: unsigned.status,
    error_code: unsigned.error_code,
    request_id: unsigned.request_id,
    provider: unsigned.provider,
    model: unsigned.model,
    hash_upstream_request: unsigned.hash_upstream_request,
    hash_upstream_response: unsigned.hash_upstream_response,
    chain: { chain_id: unsigned.chain.chain_id, seq: unsigned.chain.seq, prev_hash: unsigned.chain.prev_hash },
    extensions: { request_id: unsigned.extensions.request_id }
  }
  const sig = await signEnvelope(body, (bytes) => signer.sign(bytes))
  return { ...body, signature: sig, sig }
}
