/**
 * The SCIM 2.0 (RFC 7643) vocabulary the gateway speaks: schema URNs, the attributes it keeps for Users and Groups,
 * and the discovery documents (`/ServiceProviderConfig`, `/ResourceTypes`, `/Schemas`). One copy: the routes answer
 * these, and the validation of bodies and filters reads the same attribute lists.
 */

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
export const ENTERPRISE_USER_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
export const LIST_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
export const PATCH_OP_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
export const SERVICE_PROVIDER_CONFIG_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
export const RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
export const SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"

/** Media type of every SCIM answer (RFC 7644 section 3.1). */
export const SCIM_CONTENT_TYPE = "application/scim+json"

/** The most resources one list answer holds; a larger `count` is lowered to it (RFC 7644 section 3.4.2.4 allows it). */
export const MAX_PAGE_SIZE = 200

interface AttributeDefinition {
  readonly name: string
  readonly type: "string" | "boolean" | "complex" | "reference" | "dateTime"
  readonly multiValued: boolean
  readonly required: boolean
  readonly caseExact: boolean
  readonly mutability: "readOnly" | "readWrite" | "immutable" | "writeOnly"
  readonly returned: "always" | "never" | "default" | "request"
  readonly uniqueness: "none" | "server" | "global"
  readonly description: string
  readonly subAttributes?: ReadonlyArray<AttributeDefinition>
  readonly referenceTypes?: ReadonlyArray<string>
}

const attribute = (
  name: string,
  type: AttributeDefinition["type"],
  description: string,
  options: Partial<Omit<AttributeDefinition, "name" | "type" | "description">> = {}
): AttributeDefinition => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  description,
  ...options
})

/** The User attributes the gateway keeps. Everything else RFC 7643 defines is accepted and dropped (docs/sso.md). */
const USER_ATTRIBUTES: ReadonlyArray<AttributeDefinition> = [
  attribute("userName", "string", "The IdP's unique sign-in name of the person; unique in the organisation.", { required: true, uniqueness: "server" }),
  attribute("name", "complex", "The person's name.", {
    subAttributes: [
      attribute("givenName", "string", "Given name."),
      attribute("familyName", "string", "Family name.")
    ]
  }),
  attribute("displayName", "string", "The name shown for the person."),
  attribute("active", "boolean", "false deactivates the person: their portal sessions end and they cannot sign in."),
  attribute("emails", "complex", "The person's e-mail address (the primary one, or the first, is the account's). Required unless userName is an address.", {
    multiValued: true,
    required: true,
    subAttributes: [
      attribute("value", "string", "The e-mail address.", { required: true }),
      attribute("type", "string", "A label such as work."),
      attribute("primary", "boolean", "The address the account uses.")
    ]
  })
]

const GROUP_ATTRIBUTES: ReadonlyArray<AttributeDefinition> = [
  attribute("displayName", "string", "The group's name; it decides the organisation role its members get (docs/sso.md).", {
    required: true,
    uniqueness: "server"
  }),
  attribute("members", "complex", "The people in the group.", {
    multiValued: true,
    subAttributes: [
      attribute("value", "string", "The member's id (a SCIM User of this organisation).", { mutability: "immutable", caseExact: true }),
      attribute("$ref", "reference", "The member's URI.", { mutability: "immutable", caseExact: true, referenceTypes: ["User"] })
    ]
  })
]

const schemaDocument = (id: string, name: string, description: string, attributes: ReadonlyArray<AttributeDefinition>, baseUrl: string) => ({
  schemas: [SCHEMA_SCHEMA],
  id,
  name,
  description,
  attributes,
  meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${id}` }
})

export const schemaDocuments = (baseUrl: string) => [
  schemaDocument(USER_SCHEMA, "User", "A person of the organisation.", USER_ATTRIBUTES, baseUrl),
  schemaDocument(GROUP_SCHEMA, "Group", "A group of people; its name maps to an organisation role.", GROUP_ATTRIBUTES, baseUrl)
]

export const resourceTypeDocuments = (baseUrl: string) => [
  {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: "User",
    name: "User",
    endpoint: "/Users",
    description: "People of the organisation",
    schema: USER_SCHEMA,
    schemaExtensions: [],
    meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/User` }
  },
  {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: "Group",
    name: "Group",
    endpoint: "/Groups",
    description: "Groups, mapped to organisation roles",
    schema: GROUP_SCHEMA,
    schemaExtensions: [],
    meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/Group` }
  }
]

export const serviceProviderConfig = (baseUrl: string) => ({
  schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
  documentationUri: "https://github.com/privacy-relay/privacy-relay/blob/main/docs/sso.md",
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MAX_PAGE_SIZE },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    {
      type: "oauthbearertoken",
      name: "Bearer token",
      description: "The organisation's SCIM token (scim_...), issued by the operator with `cli.ts sso scim-token issue`.",
      primary: true
    }
  ],
  meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` }
})

/**
 * Attribute paths (lower case) a filter may name, per resource type, and whether each compares case-exactly.
 * `meta.*` and `id` are the common attributes of RFC 7643 section 3.1.
 */
export const FILTERABLE: Record<"User" | "Group", ReadonlyMap<string, { readonly caseExact: boolean }>> = {
  User: new Map([
    ["id", { caseExact: true }],
    ["externalid", { caseExact: true }],
    ["username", { caseExact: false }],
    ["displayname", { caseExact: false }],
    ["active", { caseExact: true }],
    ["name.givenname", { caseExact: false }],
    ["name.familyname", { caseExact: false }],
    ["emails", { caseExact: false }],
    ["emails.value", { caseExact: false }],
    ["emails.type", { caseExact: false }],
    ["emails.primary", { caseExact: true }],
    ["meta.created", { caseExact: true }],
    ["meta.lastmodified", { caseExact: true }]
  ]),
  Group: new Map([
    ["id", { caseExact: true }],
    ["externalid", { caseExact: true }],
    ["displayname", { caseExact: false }],
    ["members", { caseExact: true }],
    ["members.value", { caseExact: true }],
    ["meta.created", { caseExact: true }],
    ["meta.lastmodified", { caseExact: true }]
  ])
}

/**
 * User attributes of RFC 7643 (core and enterprise extension) that the gateway does not keep: accepted so an IdP's
 * default attribute mapping works, and dropped (data minimisation; docs/sso.md). A name in neither list is refused.
 */
export const USER_ATTRIBUTES_DROPPED: ReadonlySet<string> = new Set([
  "nickname", "profileurl", "title", "usertype", "preferredlanguage", "locale", "timezone", "password",
  "phonenumbers", "ims", "photos", "addresses", "entitlements", "roles", "x509certificates", "groups"
])
export const NAME_SUBATTRIBUTES_DROPPED: ReadonlySet<string> = new Set(["formatted", "middlename", "honorificprefix", "honorificsuffix"])
