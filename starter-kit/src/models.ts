/** The gateway's model catalogue entries the picker shows (GET /api/v1/models through this app's server). */
export interface ModelEntry {
  readonly id: string
  readonly provider: string
  readonly available: boolean
  readonly capabilities?: ReadonlyArray<string>
  readonly input_usd_per_mtok: string
  readonly output_usd_per_mtok: string
}

/** Chat models the key can call now. */
export const chatModels = (list: { readonly data?: ReadonlyArray<ModelEntry> }): Array<ModelEntry> =>
  (list.data ?? []).filter((m) => m.available !== false && (m.capabilities === undefined || m.capabilities.includes("chat")))
