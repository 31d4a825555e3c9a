import { base64UrlDecode, base64UrlEncode } from "../../sdks/typescript/src/wire/crypto/base64.ts"
import { signRaw, verifyRaw } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { canonicalBytes } from "../../sdks/typescript/src/wire/crypto/jcs.ts"
import { formatUsd, tryParseUsd } from "./money.ts"

/**
 * Signed licence codes: `PRL1.<base64url(JCS {licence_id, usd, issued_at})>.<base64url(ES256 r||s)>`.
 * The signature covers the exact payload bytes carried in the code, so verification never re-serialises.
 * Pure WebCrypto: runs in Node, Deno and browsers.
 */
export interface LicenceClaims {
  readonly licence_id: string
  /** Decimal USD string, e.g. "25.000000". */
  readonly usd: string
  /** ISO 8601 instant. */
  readonly issued_at: string
}

const PREFIX = "PRL1"
const LICENCE_ID = /^lic_[A-Za-z0-9]{8,64}$/

export const newLicenceId = () => `lic_${crypto.randomUUID().replaceAll("-", "")}`

export const signLicence = async (privateKey: CryptoKey, input: { readonly micros: bigint; readonly now?: Date }) => {
  const claims: LicenceClaims = {
    licence_id: newLicenceId(),
    usd: formatUsd(input.micros),
    issued_at: (input.now ?? new Date()).toISOString()
  }
  const payload = canonicalBytes(claims)
  const signature = await signRaw(privateKey, payload)
  return { code: `${PREFIX}.${base64UrlEncode(payload)}.${base64UrlEncode(signature)}`, claims }
}

export type LicenceVerdict =
  | { readonly ok: true; readonly claims: LicenceClaims; readonly micros: bigint }
  | { readonly ok: false; readonly reason: string }

/** Checks shape and signature; never throws. */
export const verifyLicence = async (publicKey: CryptoKey, code: unknown): Promise<LicenceVerdict> => {
  if (typeof code !== "string" || code.length > 2048) return { ok: false, reason: "not a licence code" }
  const parts = code.trim().split(".")
  if (parts.length !== 3 || parts[0] !== PREFIX) return { ok: false, reason: "not a licence code" }
  let payload: Uint8Array
  let signature: Uint8Array
  try {
    payload = base64UrlDecode(parts[1])
    signature = base64UrlDecode(parts[2])
  } catch {
    return { ok: false, reason: "not a licence code" }
  }
  if (!(await verifyRaw(publicKey, signature, payload))) return { ok: false, reason: "bad signature" }
  let claims: Record<string, unknown>
  try {
    claims = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload))
  } catch {
    return { ok: false, reason: "unreadable payload" }
  }
  const { licence_id, usd, issued_at } = claims
  const micros = typeof usd === "string" ? tryParseUsd(usd) : undefined
  if (typeof licence_id !== "string" || !LICENCE_ID.test(licence_id) || micros === undefined || micros <= 0n ||
    typeof issued_at !== "string" || Number.isNaN(Date.parse(issued_at))) {
    return { ok: false, reason: "malformed claims" }
  }
  return { ok: true, claims: { licence_id, usd: usd as string, issued_at }, micros }
}
