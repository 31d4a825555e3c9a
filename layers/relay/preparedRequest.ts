import type { RouteTarget } from "../../services/ProviderRouter.ts"
import type { AttestationRoute } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { canonicalBytes } from "../../sdks/typescript/src/wire/crypto/jcs.ts"
import { firstHostedTool } from "../../src/relay/requestShape.ts"
import { type Translation, translationFor } from "../../src/relay/translate/translation.ts"
import { UnsupportedTool } from "../../src/relay/translate/translationError.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"

/** The request one provider gets: the exact bytes, their hash for the receipt, and how they came about. */
export interface PreparedRequest {
  readonly target: RouteTarget
  /** Where to send it: the target's stream URL for a streamed call (some APIs stream at another path). */
  readonly url: string
  readonly body: Uint8Array
  /** `hash_upstream_request`: the JCS SHA-256 of `body`. */
  readonly hash: string
  /** Set when the body was rewritten into the provider's other wire format. */
  readonly translation: Translation | undefined
  /** A fallback to another model of the same format: only the body's `model` was replaced. */
  readonly modelRewritten: boolean
}

export interface ClientRequest {
  readonly body: Record<string, unknown>
  readonly bytes: Uint8Array
  /** The attested egress_sha256 (the JCS SHA-256 of `bytes`). */
  readonly hash: string
}

/**
 * What to send to `target`: the client's bytes unchanged when they already fit; translated when the provider speaks
 * the other format; for a fallback to another model, the body with its `model` replaced. A rewritten body is sent
 * as its JCS bytes, so its hash is the hash of exactly what went upstream. Throws `UntranslatableField`, and
 * `UnsupportedTool` for a Responses call naming a hosted tool that the target's endpoint does not run.
 */
export const prepareRequest = (
  route: AttestationRoute,
  target: RouteTarget,
  client: ClientRequest,
  options: { readonly fallback: boolean }
): PreparedRequest => {
  const url = client.body.stream === true ? target.streamUrl : target.url
  if (route === "responses" && target.endpoint.hostedTools !== true) {
    const hosted = firstHostedTool(client.body)
    if (hosted !== undefined) throw new UnsupportedTool(hosted.path, hosted.type)
  }
  const translation = translationFor(route, { wire: target.endpoint.wire, providerSlug: target.provider.slug, model: target.model.id }, client.body)
  if (translation !== undefined) {
    const body = canonicalBytes(translation.request(client.body))
    return { target, url, body, hash: sha256HexSync(body), translation, modelRewritten: false }
  }
  if (options.fallback && client.body.model !== target.model.id) {
    const body = canonicalBytes({ ...client.body, model: target.model.id })
    return { target, url, body, hash: sha256HexSync(body), translation: undefined, modelRewritten: true }
  }
  return { target, url, body: client.bytes, hash: client.hash, translation: undefined, modelRewritten: false }
}
