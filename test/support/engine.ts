import { buildAttestation, encodeAttestationHeader, type AttestationRoute } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { walkEgress } from "../../sdks/typescript/src/wire/egressPolicy.ts"

/**
 * What an official client engine adds to a relay request: `X-Service-Engine` and a v3 attestation of the exact
 * body bytes. Tests use it to play a well-behaved client (the body here is already "tokenised").
 */
export const TEST_ENGINE = { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) } as const

let deviceKey: Promise<CryptoKeyPair> | undefined
const device = () => (deviceKey ??= generateSigningKeyPair())

export const attestedHeaders = async (
  route: AttestationRoute,
  body: string | Uint8Array,
  options: {
    engine?: { id: string; version: string; sha256: string }
    now?: Date
    engineHeader?: string
    /** The attestation's `passthrough` claim; by default, every media part of the body (a client with MEDIA_POLICY=pass). */
    passthrough?: ReadonlyArray<{ path: string; kind: string }>
  } = {}
) => {
  const engine = options.engine ?? TEST_ENGINE
  const bodyBytes = typeof body === "string" ? new TextEncoder().encode(body) : body
  const envelope = await buildAttestation({
    route,
    bodyBytes,
    detectorsFired: { EMAIL: 1 },
    engine,
    keyPair: await device(),
    now: options.now,
    passthrough: options.passthrough ?? declaredMedia(route, bodyBytes)
  })
  return {
    "x-service-engine": options.engineHeader ?? `${engine.id}/${engine.version}`,
    "x-service-attestation": encodeAttestationHeader(envelope)
  }
}

/**
 * The media parts of a body, declared as a client with MEDIA_POLICY=pass declares them (tests that relay images on
 * purpose); nothing for a body the egress policy refuses (the gateway then refuses it too) or that is not JSON.
 */
export const declaredMedia = (route: AttestationRoute, bodyBytes: Uint8Array): Array<{ path: string; kind: string }> => {
  try {
    return walkEgress(route, JSON.parse(new TextDecoder().decode(bodyBytes))).media.map((m) => ({ path: m.path, kind: m.kind }))
  } catch {
    return []
  }
}

/** A fetch that signs every relay request body it sends, for the official SDKs' `fetch` option. */
export const attestingFetch = (route: AttestationRoute): typeof fetch => async (input, init) => {
  const body = init?.body
  const text = typeof body === "string" ? body : body instanceof Uint8Array ? new TextDecoder().decode(body) : ""
  const headers = new Headers(init?.headers)
  for (const [k, v] of Object.entries(await attestedHeaders(route, text))) headers.set(k, v)
  return fetch(input, { ...init, headers })
}

/** POSTs an attested chat completion to a gateway; answers the response and the attestation header sent. */
export const relayChatAttested = async (gatewayUrl: string, apiKey: string, body: string) => {
  const headers = await attestedHeaders("chat.completions", body)
  const res = await fetch(`${gatewayUrl}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
    body
  })
  return { res, attestation: headers["x-service-attestation"] }
}
