/**
 * Request bodies the way an official client engine sends them: each body is unique (a counter in the content) and
 * carries its own v3 attestation, so the gateway does the full attestation check on every call and nothing is
 * ever a replay. Attestations are valid for 300 s, so a pool is built right before the phase that uses it.
 */
import { buildAttestation, encodeAttestationHeader, type EngineIdentity } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { BENCH_IDEMPOTENCY } from "./benchSettings.ts"

export const BENCH_ENGINE: EngineIdentity = { id: "relay-ts", version: "0.1.0", sha256: "b".repeat(64) }
export const BENCH_MODEL = "local-chat"
/** Pools are used for at most this long after signing (the gateway accepts 300 s of skew). */
export const ATTESTATION_USE_LIMIT_MS = 250_000

export interface AttestedRequest {
  readonly body: Buffer
  readonly headers: Record<string, string>
}

let counter = 0
/**
 * Every gateway request carries its own Idempotency-Key (the idempotency issue's condition for the targets), so
 * the idempotency admission, the stored response and the slot release are in every measured call.
 * BENCH_IDEMPOTENCY=0 leaves the header off, to see what idempotency costs. Each program that sends through here has
 * the setting in its schema, read (and a bad value refused) at its start, before this is first asked.
 */
let idempotency: boolean | undefined
const withIdempotencyKey = (): boolean => (idempotency ??= BENCH_IDEMPOTENCY.read(process.env))
const runId = crypto.randomUUID().slice(0, 8)
let keyPair: Promise<CryptoKeyPair> | undefined
const device = () => (keyPair ??= generateSigningKeyPair())

/** The relay routes the bench sends to: chat completions everywhere, the Responses API beside it at c=1 (issue 34). */
export type BenchRoute = "chat.completions" | "responses"

const benchPrompt = (n: number) => `Request ${n}: summarise the note from <PERSON_1> about the quarterly figures in one sentence, please.`

/** About 300 bytes of "tokenised" prompt, like a short chat turn with one alias in it; the same turn for Responses. */
export const benchBody = (n: number, stream: boolean, route: BenchRoute = "chat.completions"): Buffer =>
  Buffer.from(JSON.stringify(route === "responses"
    ? { model: BENCH_MODEL, stream, max_output_tokens: 64, instructions: "You are a concise assistant.", input: [{ role: "user", content: benchPrompt(n) }] }
    : {
      model: BENCH_MODEL,
      stream,
      max_tokens: 64,
      messages: [
        { role: "system", content: "You are a concise assistant." },
        { role: "user", content: benchPrompt(n) }
      ]
    }))

export const attest = async (body: Buffer, authorization: string | undefined, route: BenchRoute = "chat.completions"): Promise<AttestedRequest> => {
  const envelope = await buildAttestation({
    route,
    bodyBytes: body,
    detectorsFired: { PERSON: 1 },
    engine: BENCH_ENGINE,
    keyPair: await device()
  })
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-service-engine": `${BENCH_ENGINE.id}/${BENCH_ENGINE.version}`,
    "x-service-attestation": encodeAttestationHeader(envelope)
  }
  if (authorization !== undefined) {
    headers.authorization = authorization
    if (withIdempotencyKey()) headers["idempotency-key"] = `bench-${runId}-${envelope.jti}`
  }
  return { body, headers }
}

/** One fresh, uniquely attested request of `route` (chat completions by default). */
export const freshRequest = (stream: boolean, authorization: string | undefined, route: BenchRoute = "chat.completions"): Promise<AttestedRequest> =>
  attest(benchBody(++counter, stream, route), authorization, route)

/**
 * A pool of `size` unique attested requests, signed now. `authorization` may name the key per position (scenario
 * (e): many tenants round-robin).
 */
export const attestedPool = async (
  size: number,
  stream: boolean,
  authorization: string | undefined | ((i: number) => string),
  route: BenchRoute = "chat.completions"
): Promise<AttestedRequest[]> => {
  const out: AttestedRequest[] = []
  const authFor = typeof authorization === "function" ? authorization : () => authorization
  // Sequential batches keep the signer from starving the event loop of a running server-side timer.
  for (let i = 0; i < size; i += 256) {
    const batch = await Promise.all(Array.from({ length: Math.min(256, size - i) }, (_, j) => freshRequest(stream, authFor(i + j), route)))
    out.push(...batch)
  }
  return out
}
