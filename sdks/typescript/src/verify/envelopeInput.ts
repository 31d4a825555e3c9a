// What the verifiers accept for an envelope: the object itself, its JSON text, or the standard base64 value
// of the header that carried it (X-Service-Receipt-V2, -Failed, -V3, X-Service-Attestation).
import { decodeEnvelopeHeader } from "../wire/receipts/header.ts"

export type EnvelopeInput = string | object

export type DecodedEnvelope = { readonly ok: true; readonly envelope: unknown } | { readonly ok: false; readonly problem: string }

/** Decodes one envelope input; never throws. A string starting with `{` is JSON text, any other the header value. */
export const decodeEnvelopeInput = (value: unknown): DecodedEnvelope => {
  if (typeof value !== "string") return { ok: true, envelope: value }
  const text = value.trim()
  try {
    return { ok: true, envelope: text.startsWith("{") ? JSON.parse(text) : decodeEnvelopeHeader(text) }
  } catch {
    return {
      ok: false,
      problem: text.startsWith("{")
        ? "the value is not valid JSON text"
        : "the value is neither JSON text nor standard padded base64 of a JSON envelope"
    }
  }
}

/** Like decodeEnvelopeInput, but hands an undecodable value on as is, for inputs the verifier reports itself. */
export const envelopeOrRaw = (value: unknown): unknown => {
  const decoded = decodeEnvelopeInput(value)
  return decoded.ok ? decoded.envelope : value
}
