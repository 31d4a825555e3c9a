/** The model picker (the gateway's catalogue, with list prices) and the switch for on-device name detection. */
import type { NameModelChoice } from "./engine.ts"
import type { ModelEntry } from "./models.ts"

export const Settings = (props: {
  readonly models: ReadonlyArray<ModelEntry>
  readonly model: string
  readonly onModel: (id: string) => void
  readonly names: NameModelChoice
  readonly onNames: (on: boolean) => void
}) => (
  <div className="settings">
    <label>
      Model{" "}
      <select value={props.model} onChange={(e) => props.onModel(e.target.value)} disabled={props.models.length === 0}>
        {props.models.length === 0 ? <option value="">loading models…</option> : null}
        {props.models.map((m) => (
          <option key={m.id} value={m.id}>
            {m.id} ({m.provider}, ${m.input_usd_per_mtok}/${m.output_usd_per_mtok} per M tokens)
          </option>
        ))}
      </select>
    </label>
    <label>
      <input type="checkbox" checked={props.names === "builtin"} onChange={(e) => props.onNames(e.target.checked)} /> Detect names on this device
    </label>
    <p className="hint">
      {props.names === "builtin"
        ? "Names, e-mails, phones, IBANs, cards and other identifiers are replaced by aliases before anything leaves."
        : "Names are sent as typed; e-mails, phones, IBANs, cards and other identifiers are still replaced."}
    </p>
  </div>
)
