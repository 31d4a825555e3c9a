// The node:crypto backend for sdks/typescript/src/wire/attestation/v3.ts verifyAttestation on the gateway: synchronous ES256
// verification with a process-wide bounded cache of attester keys, and a synchronous JCS body hash. The
// portable default (WebCrypto) stays in src/ for the client engine and Deno.
import type { AttestationCrypto } from "../../sdks/typescript/src/wire/attestation/v3.ts"
import { makeNodeEs256Verifier } from "./nodeEs256Verifier.ts"
import { requestBodySha256HexSync } from "./nodeSha256.ts"

/** One cache per process: every relayed call sees the same attester keys. */
const verifier = makeNodeEs256Verifier()

export const nodeAttestationCrypto: AttestationCrypto = {
  verifyEs256: (jwk, signature, bytes) => verifier.verify(jwk, signature, bytes),
  jsonBodySha256Hex: requestBodySha256HexSync
}
