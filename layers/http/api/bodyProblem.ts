import { Result, Schema, SchemaIssue } from "effect"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** `["permissions", 1]` as the validators name it: `permissions[1]`; the root is `$`. */
const pathText = (path: ReadonlyArray<PropertyKey>) =>
  path.length === 0 ? "$" : path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("")

/**
 * The first way `body` breaks the documented request schema (unknown fields included), or undefined when it
 * conforms: the path of the offending field and a message that names it.
 */
export const bodyProblem = (schema: Schema.Top, body: unknown): { readonly path: string; readonly message: string } | undefined => {
  const result = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)(body, { onExcessProperty: "error" })
  if (Result.isSuccess(result)) return undefined
  const first = formatter(result.failure.issue).issues[0]
  const path = pathText((first?.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? (p as { key: PropertyKey }).key : p as PropertyKey)))
  const message = first?.message === "Expected no excess property" ? `Unknown field "${path}".` : `"${path}": ${first?.message ?? "does not match the documented schema"}.`
  return { path, message }
}
