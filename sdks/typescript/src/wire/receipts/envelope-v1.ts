// The v1 receipt: gateway-signed, stored in the per-account chain `tenant-<account_id>`; what the
// receipt list and the portal JTI lookup return. No trust tier (that belongs to v3).
import type { ChainLink } from "./chain.ts"
import { signEnvelopeCanonical, type Signer } from "./signer.ts"

export interface RoutingDecisionV1 {
  readonly from: string
  readonly to: string
  readonly chosen_model: string
  readonly strategy: string
  readonly classifier: string
}

export interface ReceiptV1Claims {
  /** The capability (route) of the call, e.g. `completions`, `messages`, `embeddings`. */
  readonly capability: string
  readonly provider: string
  readonly model: string
  readonly tokens_in: number
  readonly tokens_out: number
  /** Bare lowercase hex, no `sha256:` prefix. */
  readonly hash_upstream_request: string
  readonly hash_upstream_response: string
  /** null when the router did not run. */
  readonly routing_decision: RoutingDecisionV1 | null
  /** How the body was tokenised, e.g. `client` (always client-side: the gateway never tokenises). */
  readonly tokenisation_mode: string
  /** Version of the client tokeniser engine named by X-Service-Engine; null when not known. */
  readonly engine_version: string | null
}

export interface ReceiptV1 {
  readonly v: "v1"
  readonly alg: "ecdsa-p256-sha256"
  readonly kid: string
  readonly iss: string
  /** Names the gateway key (its key_prefix). */
  readonly sub: string
  readonly jti: string
  readonly iat: number
  /** chain_id `tenant-<account_id>`. */
  readonly chain: ChainLink
  readonly claims: ReceiptV1Claims
  /** base64url raw r||s over the JCS bytes of the envelope without `sig`. */
  readonly sig: string
}

export type UnsignedReceiptV1 = Omit<ReceiptV1, "v" | "alg" | "kid" | "sig">

export const signReceiptV1 = async (unsigned: UnsignedReceiptV1, signer: Signer): Promise<ReceiptV1> =>
  (await signReceiptV1Canonical(unsigned, signer)).receipt

/** signReceiptV1, also answering the JCS text of the whole signed receipt (see signReceiptV2Canonical). */
export const signReceiptV1Canonical = async (
  unsigned: UnsignedReceiptV1,
  signer: Signer
): Promise<{ readonly receipt: ReceiptV1; readonly canonical: string }> => {
  const c = unsigned.claims
  const body = {
    v: "v1" as const,
    alg: "ecdsa-p256-sha256" as const,
    kid: signer.kid,
    iss: unsigned.iss,
    sub: unsigned.sub,
    jti: unsigned.jti,
    iat: unsigned.iat,
    chain: { chain_id: unsigned.chain.chain_id, seq: unsigned.chain.seq, prev_hash: unsigned.chain.prev_hash },
    claims: {
      capability: c.capability,
      provider: c.provider,
      model: c.model,
      tokens_in: c.tokens_in,
      tokens_out: c.tokens_out,
      hash_upstream_request: c.hash_upstream_request,
      hash_upstream_response: c.hash_upstream_response,
      routing_decision: c.routing_decision,
      tokenisation_mode: c.tokenisation_mode,
      engine_version: c.engine_version
    }
  }
  const { sig, signedText } = await signEnvelopeCanonical(body, (bytes) => signer.sign(bytes), ["sig"])
  return { receipt: { ...body, sig }, canonical: signedText }
}
