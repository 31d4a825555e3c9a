import type { Role } from "../../services/Accounts.ts"

/**
 * The organisation role a SCIM group gives its members, from the group's name (docs/sso.md, "Groups and roles"): a
 * name whose last word is Owner(s) gives `owner`, Admin(s) or Administrator(s) gives `admin`, any other name `member`.
 * "Privacy Relay Owners" and "relay-admins" work; so IdP groups need no extra attribute.
 */
export const roleOfGroupName = (displayName: string): Role => {
  const words = displayName.toLowerCase().split(/[^a-z]+/).filter(Boolean)
  const last = words[words.length - 1] ?? ""
  if (last === "owner" || last === "owners") return "owner"
  if (last === "admin" || last === "admins" || last === "administrator" || last === "administrators") return "admin"
  return "member"
}

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** A person's role from the groups they are in: the highest; `member` when they are in none. */
export const roleOfGroups = (roles: ReadonlyArray<Role>): Role => roles.reduce<Role>((best, r) => (RANK[r] > RANK[best] ? r : best), "member")
