import type { EntityType } from "./types.ts"

/**
 * Two alias formats (docs/tokeniser.md, "Alias format" and "Stable aliases"):
 *
 * Per-request (the default): `<TYPE_N_tag>`, e.g. `<EMAIL_1_k3f9>`.
 *  - TYPE: the category, readable by the model (EMAIL, PHONE, PERSON, ...).
 *  - N: 1, 2, ... numbered per type in order of first appearance within ONE request.
 *  - tag: 4 characters of HMAC-SHA256(request secret, "TYPE_N#attempt") in a 32-letter alphabet.
 * The alias carries no information about the value; numbering restarts in every request and the tag
 * comes from a fresh per-request secret, so the same value gets unrelated aliases in two requests.
 * The tag also makes an alias unguessable by text that did not see this request's output, and keeps
 * aliases distinct from literal "<EMAIL_1>" strings a user may paste.
 *
 * Stable: `<TYPE_tag10>`, e.g. `<EMAIL_k3f9m2qd7x>`: 10 characters (50 bits) of HMAC-SHA256(device-held secret,
 * "TYPE\0value"), so the same value gets the same alias in every request made with that secret (repeatable
 * embeddings), and two different values of a type collide only after about 2^25 of them.
 */
export const ALIAS_PATTERN = /<[A-Z][A-Z0-9_]*_(?:\d+_[a-z2-9]{4}|[a-z2-9]{10})>/g

const TAG_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789" // 32 symbols, no l/o/0/1

/** Tag length of a per-request alias. */
export const REQUEST_TAG_LENGTH = 4
/** Tag length of a stable alias: long enough that distinct values practically never share one. */
export const STABLE_TAG_LENGTH = 10

export const formatAlias = (type: EntityType, index: number, tag: string): string => `<${type}_${index}_${tag}>`

export const formatStableAlias = (type: EntityType, tag: string): string => `<${type}_${tag}>`

/** The first `length` characters (5 bits from each byte) of a MAC, in the tag alphabet. */
export const tagFromMac = (mac: Uint8Array, length: number = REQUEST_TAG_LENGTH): string => {
  let tag = ""
  for (let i = 0; i < length; i++) tag += TAG_ALPHABET[mac[i]! & 31]
  return tag
}
