import type { EntityType } from "./types.ts"

/**
 * Alias format: `<TYPE_N_tag>`, e.g. `<EMAIL_1_k3f9>`.
 *  - TYPE: the category, readable by the model (EMAIL, PHONE, PERSON, ...).
 *  - N: 1, 2, ... numbered per type in order of first appearance within ONE request.
 *  - tag: 4 characters of HMAC-SHA256(request secret, "TYPE_N#attempt") in a 32-letter alphabet.
 * The alias carries no information about the value; numbering restarts in every request and the tag
 * comes from a fresh per-request secret, so the same value gets unrelated aliases in two requests.
 * The tag also makes an alias unguessable by text that did not see this request's output, and keeps
 * aliases distinct from literal "<EMAIL_1>" strings a user may paste.
 */
export const ALIAS_PATTERN = /<[A-Z][A-Z0-9_]*_\d+_[a-z2-9]{4}>/g

const TAG_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789" // 32 symbols, no l/o/0/1

export const formatAlias = (type: EntityType, index: number, tag: string): string => `<${type}_${index}_${tag}>`

export const tagFromMac = (mac: Uint8Array): string => {
  let tag = ""
  for (let i = 0; i < 4; i++) tag += TAG_ALPHABET[mac[i]! & 31]
  return tag
}
