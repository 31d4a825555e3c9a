import { readFileSync } from "node:fs"
import { join } from "node:path"

export const VECTORS_DIR = join(import.meta.dirname, "../../../sdks/vectors")

/** A vector file as committed (the tests read the files, not the generator, so they check what other SDKs get). */
export const readVectors = <A = any>(name: string): A => JSON.parse(readFileSync(join(VECTORS_DIR, name), "utf8")) as A

/** Vector cases as it.each rows: [title, case]. */
export const rows = (cases: ReadonlyArray<any>, title: (c: any) => string = (c) => c.name): Array<[string, any]> =>
  cases.map((c) => [title(c), c])
