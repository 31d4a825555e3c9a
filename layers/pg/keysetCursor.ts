import { base64UrlDecode, base64UrlEncode } from "../../sdks/typescript/src/wire/crypto/base64.ts"

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * A keyset cursor: the sort values of a page's last row, opaque to callers (base64url of a JSON array of strings).
 * The caller checks each value's form before it reaches SQL.
 */
export const encodeKeysetCursor = (values: ReadonlyArray<string>): string => base64UrlEncode(utf8.encode(JSON.stringify(values)))

/** The `size` strings of a cursor made by `encodeKeysetCursor`, or undefined for anything else. */
export const decodeKeysetCursor = (cursor: string, size: number): ReadonlyArray<string> | undefined => {
  if (cursor.length > 1000) return undefined
  try {
    const value: unknown = JSON.parse(utf8Decoder.decode(base64UrlDecode(cursor)))
    if (Array.isArray(value) && value.length === size && value.every((v) => typeof v === "string")) return value as Array<string>
  } catch {
    // fall through: not one of ours
  }
  return undefined
}
