/** One row of the error catalogue (docs/errors.md): the stable code, its HTTP status and when it is answered. */
export interface CatalogueEntry {
  readonly code: string
  readonly status: number
  readonly when: string
}

/** The rows of the catalogue table `| status | \`code\` | when |` in docs/errors.md, in document order. */
export const parseErrorCatalogue = (markdown: string): ReadonlyArray<CatalogueEntry> =>
  [...markdown.matchAll(/^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|\s*(.*?)\s*\|\s*$/gm)].map((m) => ({
    status: Number(m[1]),
    code: m[2]!,
    when: m[3]!
  }))
