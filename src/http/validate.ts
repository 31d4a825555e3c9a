import { ApiError } from "./ApiError.ts"

/**
 * Small, strict validators for JSON request bodies: wrong types, unknown fields and over-long strings all give
 * 400 `invalid_request` with the offending path in `details.path`.
 */
export const invalid = (path: string, message: string) =>
  new ApiError({ status: 400, code: "invalid_request", message, extra: { details: { path } } })

export const parseJsonObject = (text: string): Record<string, unknown> | ApiError => {
  let value: unknown
  try {
    value = text.trim() === "" ? {} : JSON.parse(text)
  } catch {
    return invalid("$", "The request body is not valid JSON.")
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return invalid("$", "The request body must be a JSON object.")
  return value as Record<string, unknown>
}

export const rejectUnknownFields = (body: Record<string, unknown>, allowed: ReadonlyArray<string>): ApiError | undefined => {
  const extra = Object.keys(body).find((k) => !allowed.includes(k))
  return extra === undefined ? undefined : invalid(extra, `Unknown field "${extra}". Allowed: ${allowed.join(", ")}.`)
}

export const optionalString = (
  body: Record<string, unknown>,
  field: string,
  maxLength: number
): string | undefined | ApiError => {
  const v = body[field]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "string") return invalid(field, `"${field}" must be a string.`)
  if (v.length > maxLength) return invalid(field, `"${field}" must be at most ${maxLength} characters.`)
  return v
}

// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is proven by the verification link.
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/

export const isPlausibleEmail = (s: string) => EMAIL.test(s)
