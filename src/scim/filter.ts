import { type Filter, parse, Tester } from "scim2-parse-filter"
import { FILTERABLE, GROUP_SCHEMA, USER_SCHEMA } from "./schemas.ts"

/** Why a `filter` query parameter was refused: its text, or an attribute the resource type does not have. */
export class FilterProblem extends Error {}

type ResourceType = keyof typeof FILTERABLE

/** An attribute path without its schema URN prefix (`urn:...:User:userName` -> `userName`), lower case. */
const bareLowerPath = (path: string, resourceType: ResourceType) => {
  const urn = (resourceType === "User" ? USER_SCHEMA : GROUP_SCHEMA).toLowerCase() + ":"
  const lower = path.toLowerCase()
  return lower.startsWith(urn) ? lower.slice(urn.length) : lower
}

/** Every attribute path the filter names, with `a[b eq 1]` read as `a` and `a.b`. */
const pathsOf = (filter: Filter, prefix = ""): Array<string> => {
  switch (filter.op) {
    case "and":
    case "or":
      return filter.filters.flatMap((f) => pathsOf(f, prefix))
    case "not":
      return pathsOf(filter.filter, prefix)
    case "[]":
      return [prefix + filter.attrPath, ...pathsOf(filter.valFilter, `${prefix}${filter.attrPath}.`)]
    default:
      return [prefix + filter.attrPath]
  }
}

/** The same filter with the core schema's URN taken off each path (`urn:...:User:userName` is `userName`). */
const withoutUrns = (filter: Filter, resourceType: ResourceType): Filter => {
  const urn = (resourceType === "User" ? USER_SCHEMA : GROUP_SCHEMA).toLowerCase() + ":"
  const strip = (path: string) => (path.toLowerCase().startsWith(urn) ? path.slice(urn.length) : path)
  switch (filter.op) {
    case "and":
    case "or":
      return { ...filter, filters: filter.filters.map((f) => withoutUrns(f, resourceType)) }
    case "not":
      return { ...filter, filter: withoutUrns(filter.filter, resourceType) }
    case "[]":
      return { ...filter, attrPath: strip(filter.attrPath), valFilter: withoutUrns(filter.valFilter, resourceType) }
    default:
      return { ...filter, attrPath: strip(filter.attrPath) }
  }
}

/**
 * Compares case-insensitively where RFC 7643 says the attribute is not caseExact (userName, displayName, e-mail
 * addresses): `userName eq "Ada@Example.org"` finds `ada@example.org`, as IdPs expect.
 */
class CaseAwareTester extends Tester {
  private readonly resourceType: ResourceType
  constructor(resourceType: ResourceType) {
    super()
    this.resourceType = resourceType
  }
  override test(r: unknown, f: Filter, prefix = ""): boolean {
    switch (f.op) {
      case "and":
        return f.filters.every((c) => this.test(r, c, prefix))
      case "or":
        return f.filters.some((c) => this.test(r, c, prefix))
      case "not":
        return !this.test(r, f.filter, prefix)
      case "[]":
        return this.attrTest(this.attrPath(f.attrPath), r, (s: unknown) => this.test(s, f.valFilter, `${prefix}${f.attrPath}.`))
      case "pr":
        return super.test(r, f)
      default: {
        const caseExact = FILTERABLE[this.resourceType].get(bareLowerPath(prefix + f.attrPath, this.resourceType))?.caseExact ?? true
        if (caseExact || typeof f.compValue !== "string") return super.test(r, f)
        const lowered = f.compValue.toLowerCase()
        return this.attrTest(this.attrPath(f.attrPath), r, (s: unknown) =>
          (this as unknown as Record<string, (a: unknown, b: unknown) => boolean>)[f.op](typeof s === "string" ? s.toLowerCase() : s, lowered))
      }
    }
  }
}

/**
 * Parses a SCIM filter (RFC 7644 section 3.4.2.2) with scim2-parse-filter and checks every attribute it names
 * exists on the resource type. Returns a predicate over the resource's SCIM JSON. Throws FilterProblem.
 */
export const compileFilter = (text: string, resourceType: ResourceType): ((resource: unknown) => boolean) => {
  let filter: Filter
  try {
    filter = parse(text)
  } catch (e) {
    throw new FilterProblem(`The filter is not valid SCIM filter syntax (${e instanceof Error ? e.message.slice(0, 120) : "parse error"}).`)
  }
  for (const path of pathsOf(filter)) {
    if (!FILTERABLE[resourceType].has(bareLowerPath(path, resourceType))) {
      throw new FilterProblem(`The filter names an attribute ${resourceType} does not have: ${path.slice(0, 100)}.`)
    }
  }
  const tester = new CaseAwareTester(resourceType)
  const bare = withoutUrns(filter, resourceType)
  return (resource) => tester.test(resource, bare)
}
