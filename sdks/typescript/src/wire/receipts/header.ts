// Receipt headers (X-Service-Receipt-V2, -Failed, -V3) carry standard padded base64 of the envelope
// JSON. Decoding returns `unknown`: the verifier, not the decoder, decides what shape is acceptable.
import { base64DecodeUtf8, base64EncodeUtf8 } from "../crypto/base64.ts"

export const encodeEnvelopeHeader = (envelope: object): string => base64EncodeUtf8(JSON.stringify(envelope))

/** Throws when the value is not padded standard base64 of UTF-8 JSON. */
export const decodeEnvelopeHeader = (headerValue: string): unknown => JSON.parse(base64DecodeUtf8(headerValue.trim()))
