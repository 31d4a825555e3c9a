import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, NAME_SUBATTRIBUTES_DROPPED, USER_ATTRIBUTES_DROPPED, USER_SCHEMA } from "./schemas.ts"

/** Why a SCIM body was refused, as the `scimType` it answers with. */
export interface BodyProblem {
  readonly problem: "invalidSyntax" | "invalidValue" | "invalidPath"
  readonly detail: string
}

export interface UserInput {
  readonly userName: string
  readonly externalId: string | null
  readonly givenName: string | null
  readonly familyName: string | null
  readonly displayName: string | null
  /** null: the IdP did not say (counts as active). */
  readonly active: boolean | null
  /** The account's address: the primary (or first) of `emails`, else userName when it is an address. */
  readonly email: string
  readonly emailType: string | null
  /** The `primary` flag as the IdP sent it (null: not sent). */
  readonly emailPrimary: boolean | null
}

export interface GroupInput {
  readonly displayName: string
  readonly externalId: string | null
  readonly memberIds: ReadonlyArray<string>
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/
const MAX_TEXT = 256

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Which kind of problem an attribute the resource does not have is: a PUT/POST body that does not follow the schema
 * (`invalidSyntax`), or a PATCH whose path names it (`invalidPath`, RFC 7644 section 3.5.2).
 */
export type UnknownAttributeProblem = "invalidSyntax" | "invalidPath"

const text = (v: unknown, name: string, required: boolean): string | null | BodyProblem => {
  if (v === undefined || v === null || v === "") {
    return required ? { problem: "invalidValue", detail: `${name} is required.` } : null
  }
  if (typeof v !== "string") return { problem: "invalidSyntax", detail: `${name} must be a string.` }
  if (v.length > MAX_TEXT) return { problem: "invalidValue", detail: `${name} is longer than ${MAX_TEXT} characters.` }
  return v
}

const isProblem = (v: unknown): v is BodyProblem => isRecord(v) && typeof v["problem"] === "string" && typeof v["detail"] === "string"

/** `true`/`false`, and the strings "True"/"False" Microsoft Entra ID sends in PATCH values. */
const bool = (v: unknown, name: string): boolean | BodyProblem => {
  if (typeof v === "boolean") return v
  if (typeof v === "string" && /^(true|false)$/i.test(v)) return v.toLowerCase() === "true"
  return { problem: "invalidSyntax", detail: `${name} must be a boolean.` }
}

const checkSchemas = (body: Record<string, unknown>, core: string, allowed: ReadonlyArray<string>): BodyProblem | undefined => {
  const schemas = body["schemas"]
  if (schemas === undefined) return undefined
  if (!Array.isArray(schemas) || !schemas.every((s) => typeof s === "string")) return { problem: "invalidSyntax", detail: "schemas must be a list of URNs." }
  const unknown = schemas.find((s) => !allowed.some((a) => a.toLowerCase() === s.toLowerCase()))
  if (unknown !== undefined) return { problem: "invalidValue", detail: `Unknown schema: ${unknown.slice(0, 120)}.` }
  if (!schemas.some((s) => s.toLowerCase() === core.toLowerCase())) return { problem: "invalidValue", detail: `schemas must include ${core}.` }
  return undefined
}

/** A User body (POST, PUT, or the result of applying a PATCH) -> what the gateway keeps, or why it is refused. */
export const parseUserBody = (body: unknown, unknownProblem: UnknownAttributeProblem): UserInput | BodyProblem => {
  if (!isRecord(body)) return { problem: "invalidSyntax", detail: "The body must be a JSON object (a SCIM User)." }
  const schemasProblem = checkSchemas(body, USER_SCHEMA, [USER_SCHEMA, ENTERPRISE_USER_SCHEMA])
  if (schemasProblem) return schemasProblem
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    const lower = key.toLowerCase()
    if (lower === "schemas" || lower === "id" || lower === "meta" || lower === ENTERPRISE_USER_SCHEMA.toLowerCase()) continue
    if (USER_ATTRIBUTES_DROPPED.has(lower)) continue
    if (!["username", "externalid", "name", "displayname", "active", "emails"].includes(lower)) {
      return { problem: unknownProblem, detail: `User has no attribute ${key.slice(0, 100)}.` }
    }
    fields[lower] = value
  }
  const userName = text(fields["username"], "userName", true)
  if (isProblem(userName)) return userName
  const externalId = text(fields["externalid"], "externalId", false)
  if (isProblem(externalId)) return externalId
  const displayName = text(fields["displayname"], "displayName", false)
  if (isProblem(displayName)) return displayName
  let givenName: string | null = null
  let familyName: string | null = null
  if (fields["name"] !== undefined && fields["name"] !== null) {
    if (!isRecord(fields["name"])) return { problem: "invalidSyntax", detail: "name must be an object." }
    for (const [key, value] of Object.entries(fields["name"])) {
      const lower = key.toLowerCase()
      if (NAME_SUBATTRIBUTES_DROPPED.has(lower)) continue
      if (lower === "givenname") {
        const v = text(value, "name.givenName", false)
        if (isProblem(v)) return v
        givenName = v
      } else if (lower === "familyname") {
        const v = text(value, "name.familyName", false)
        if (isProblem(v)) return v
        familyName = v
      } else {
        return { problem: unknownProblem, detail: `User has no attribute name.${key.slice(0, 100)}.` }
      }
    }
  }
  const active = fields["active"] === undefined || fields["active"] === null ? null : bool(fields["active"], "active")
  if (isProblem(active)) return active
  let email: string | null = null
  let emailType: string | null = null
  let emailPrimary: boolean | null = null
  const emails = fields["emails"]
  if (emails !== undefined && emails !== null) {
    if (!Array.isArray(emails) || !emails.every(isRecord)) return { problem: "invalidSyntax", detail: "emails must be a list of objects." }
    for (const entry of emails) {
      const unknown = Object.keys(entry).find((k) => !["value", "type", "primary", "display"].includes(k.toLowerCase()))
      if (unknown !== undefined) return { problem: unknownProblem, detail: `User has no attribute emails.${unknown.slice(0, 100)}.` }
    }
    const chosen = emails.find((e) => e["primary"] === true || e["primary"] === "True" || e["primary"] === "true") ?? emails[0]
    if (chosen !== undefined) {
      if (typeof chosen["value"] !== "string" || !EMAIL.test(chosen["value"])) return { problem: "invalidValue", detail: "emails[].value must be an e-mail address." }
      email = chosen["value"]
      const type = text(chosen["type"], "emails[].type", false)
      if (isProblem(type)) return type
      emailType = type
      if (chosen["primary"] !== undefined && chosen["primary"] !== null) {
        const primary = bool(chosen["primary"], "emails[].primary")
        if (isProblem(primary)) return primary
        emailPrimary = primary
      }
    }
  }
  if (email === null) {
    if (!EMAIL.test(userName!)) return { problem: "invalidValue", detail: "A User needs an e-mail address: in emails, or as userName." }
    email = userName!
  }
  return { userName: userName!, externalId, givenName, familyName, displayName, active, email, emailType, emailPrimary }
}

/** A Group body -> its name, externalId and member ids, or why it is refused. */
export const parseGroupBody = (body: unknown, unknownProblem: UnknownAttributeProblem): GroupInput | BodyProblem => {
  if (!isRecord(body)) return { problem: "invalidSyntax", detail: "The body must be a JSON object (a SCIM Group)." }
  const schemasProblem = checkSchemas(body, GROUP_SCHEMA, [GROUP_SCHEMA])
  if (schemasProblem) return schemasProblem
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    const lower = key.toLowerCase()
    if (lower === "schemas" || lower === "id" || lower === "meta") continue
    if (!["displayname", "externalid", "members"].includes(lower)) {
      return { problem: unknownProblem, detail: `Group has no attribute ${key.slice(0, 100)}.` }
    }
    fields[lower] = value
  }
  const displayName = text(fields["displayname"], "displayName", true)
  if (isProblem(displayName)) return displayName
  const externalId = text(fields["externalid"], "externalId", false)
  if (isProblem(externalId)) return externalId
  const members = fields["members"] ?? []
  if (!Array.isArray(members) || !members.every(isRecord)) return { problem: "invalidSyntax", detail: "members must be a list of objects." }
  const memberIds: Array<string> = []
  for (const member of members) {
    const unknown = Object.keys(member).find((k) => !["value", "$ref", "display", "type"].includes(k.toLowerCase()))
    if (unknown !== undefined) return { problem: unknownProblem, detail: `Group has no attribute members.${unknown.slice(0, 100)}.` }
    if (typeof member["value"] !== "string" || member["value"] === "") return { problem: "invalidValue", detail: "members[].value (a User id) is required." }
    if (!memberIds.includes(member["value"])) memberIds.push(member["value"])
  }
  return { displayName: displayName!, externalId, memberIds }
}

export const isBodyProblem = isProblem
