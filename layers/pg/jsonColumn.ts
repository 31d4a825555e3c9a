/**
 * A jsonb value as a query hands it over. Both drivers (pg, PGlite) parse jsonb themselves; a value that arrives as
 * text (json produced as text by a function or a cast) is parsed here, so callers need not care which they got.
 */
export const jsonColumn = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A
