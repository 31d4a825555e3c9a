// The v2 receipt: gateway-signed, flat, returned on every completed relay call
// (X-Service-Receipt-V2 header / `receipt-v2` stream trailer). Fields follow the spec table.
import type { ChainLink } from "./chain.ts"
import { signEnvelopeCanonical, type Signer } from "./signer.ts"
import type { ClientWireFormat, WireFormatName } from "./wireFormat.ts"

/** Present when the router ran. There is deliberately no provider_id member. */
export interface RoutingDecisionV2 {
  readonly from: string
  readonly to: string
  readonly chosen_model: string
  readonly classifier: string
  readonly savings_pct: number
  readonly strategy: string
  /** Which of the provider's pooled keys served the call (`key 2 of 3`), when it has several. Never the key. */
  readonly key_slot?: string
}

export interface ReceiptV2 {
  readonly v: 2
  readonly alg: "ES256"
  readonly kid: string
  /** Issuer URL: the gateway's PUBLIC_BASE_URL. */
  readonly iss: string
  /** 32 lowercase hex; shared with the v1 receipt of the same call. */
  readonly jti: string
  /** Unix seconds when sealed. */
  readonly iat: number
  /** RFC 3339, millisecond precision, UTC `Z`. */
  readonly timestamp: string
  /** The provider's response id (not the X-Request-Id). */
  readonly request_id: string
  readonly provider: string
  readonly model: string
  readonly routing_decision?: RoutingDecisionV2
  readonly input_tokens: number
  readonly output_tokens: number
  /** SHA-256 hex of the JCS form of the JSON body relayed to the provider. */
  readonly hash_upstream_request: string
  /** SHA-256 hex of the exact upstream response bytes. */
  readonly hash_upstream_response: string
  /** chain_id `receipt-v2-org-<org_id>`. */
  readonly chain: ChainLink
  /** Same value as `sig`: base64url raw r||s over the JCS bytes without `signature` and `sig`. */
  readonly signature: string
  readonly sig: string
  readonly extensions: {
    /** The call's X-Request-Id. */
    readonly request_id: string
    /**
     * Present when the gateway translated the call between wire formats (an OpenAI chat completion served by an
     * Anthropic-format provider, or the reverse): `hash_upstream_request` then hashes the translated body that was
     * sent, and `hash_client_request` the client's body (its attested egress_sha256).
     */
    readonly translation?: UpstreamTranslation
  }
}

/**
 * The formats of a translated call and the JCS SHA-256 of the client's own body. `from` is the client's format (the
 * relay route's), `to` the format that went upstream: the other client format or a provider's own (`gemini`, ...).
 */
export interface UpstreamTranslation {
  readonly from: ClientWireFormat
  readonly to: WireFormatName
  readonly hash_client_request: string
}

/** What the caller provides; `v`, `alg`, `kid`, `signature` and `sig` are set when signing. */
export type UnsignedReceiptV2 = Omit<ReceiptV2, "v" | "alg" | "kid" | "signature" | "sig">

/** Seals a v2 receipt: sets v/alg/kid and the identical `signature` and `sig` values. */
export const signReceiptV2 = async (unsigned: UnsignedReceiptV2, signer: Signer): Promise<ReceiptV2> =>
  (await signReceiptV2Canonical(unsigned, signer)).receipt

/**
 * signReceiptV2, also answering `canonical`: the JCS text of the whole signed receipt (what chain.ts envelopeHash
 * hashes), from the same canonicalisation as its signing input (the gateway's sealer chains on it).
 */
export const signReceiptV2Canonical = async (
  unsigned: UnsignedReceiptV2,
  signer: Signer
): Promise<{ readonly receipt: ReceiptV2; readonly canonical: string }> => {
  // Spelled out member by member so stray members of the argument never get signed.
  const body = {
    v: 2 as const,
    alg: "ES256" as const,
    kid: signer.kid,
    iss: unsigned.iss,
    jti: unsigned.jti,
    iat: unsigned.iat,
    timestamp: unsigned.timestamp,
    request_id: unsigned.request_id,
    provider: unsigned.provider,
    model: unsigned.model,
    ...(unsigned.routing_decision === undefined ? {} : { routing_decision: unsigned.routing_decision }),
    input_tokens: unsigned.input_tokens,
    output_tokens: unsigned.output_tokens,
    hash_upstream_request: unsigned.hash_upstream_request,
    hash_upstream_response: unsigned.hash_upstream_response,
    chain: { chain_id: unsigned.chain.chain_id, seq: unsigned.chain.seq, prev_hash: unsigned.chain.prev_hash },
    extensions: {
      request_id: unsigned.extensions.request_id,
      ...(unsigned.extensions.translation === undefined ? {} : {
        translation: {
          from: unsigned.extensions.translation.from,
          to: unsigned.extensions.translation.to,
          hash_client_request: unsigned.extensions.translation.hash_client_request
        }
      })
    }
  }
  const { sig, signedText } = await signEnvelopeCanonical(body, (bytes) => signer.sign(bytes), ["signature", "sig"])
  return { receipt: { ...body, signature: sig, sig }, canonical: signedText }
}
