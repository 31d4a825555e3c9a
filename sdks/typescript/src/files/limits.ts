/** Bounds on what reading one file may cost: its size, and for zip packages what its entries may expand to. */
export interface FileLimits {
  /** Largest file accepted, in bytes (default 20 MB). */
  readonly maxBytes: number
  /** Most bytes the entries read from one package may expand to, in total (default 200 MB). */
  readonly maxExpandedBytes: number
  /** Most entries a package may list (default 10,000). */
  readonly maxEntries: number
}

export const DEFAULT_FILE_LIMITS: FileLimits = {
  maxBytes: 20 * 1000 * 1000,
  maxExpandedBytes: 200 * 1000 * 1000,
  maxEntries: 10_000
}

export const fileLimits = (overrides: Partial<FileLimits> | undefined): FileLimits => ({ ...DEFAULT_FILE_LIMITS, ...overrides })
