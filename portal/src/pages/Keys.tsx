/** @jsxImportSource preact */
// Gateway keys: create (scopes, model allowlist; the key shown once), rename, rotate (the old key dies at once) and
// revoke. The portal never sees a key again after showing it: the gateway stores only its hash.
import type { GatewayResponse, GatewaySchemas } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { type Account, call, can, rest } from "../api.ts"
import { ConfirmButton, Empty, ErrorNotice, Loading, ShownOnce, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { dateTime } from "../format.ts"

type Key = GatewaySchemas["Key"]
/** A key just minted (create or rotate): shown once. */
export type Minted = GatewaySchemas["MintedKey"]

export const Keys = ({ me }: { me: Account }) => {
  useTitle("Keys")
  const [keys, reload] = useLoad(() => rest.keys.list() as Promise<GatewayResponse<"listKeys">>)
  const [minted, setMinted] = useState<Minted | undefined>(undefined)
  const writable = can(me, "ability:keys.write")
  const shown = (m: Minted) => {
    setMinted(m)
    reload()
  }
  return (
    <section>
      <h1>Keys</h1>
      <p class="muted">Gateway keys (<code>svc_…</code>) authenticate your application's relay calls. Keep them on your server.</p>
      {minted !== undefined
        ? (
          <ShownOnce label={minted.replaces !== undefined ? `New key for ${minted.key_prefix}` : `Key ${minted.key_prefix}`} value={minted.api_key}>
            {minted.replaces !== undefined ? <p><strong>Deploy the new key at once:</strong> the previous key already stopped working.</p> : null}
          </ShownOnce>
        )
        : null}
      {writable ? <CreateKey onCreated={shown} /> : <p>Your role can read keys but not change them.</p>}
      <h2>Your keys</h2>
      {keys.state === "loading" ? <Loading what="keys" /> : null}
      {keys.state === "error" ? <ErrorNotice error={keys.error} onRetry={reload} /> : null}
      {keys.state === "ready" && keys.data.keys.length === 0 ? <Empty><p>No keys yet. Create one above to make your first call.</p></Empty> : null}
      {keys.state === "ready" && keys.data.keys.length > 0
        ? <KeyTable label="Keys" keys={keys.data.keys} writable={writable} onChanged={reload} onMinted={shown} />
        : null}
    </section>
  )
}

/** Keys with their rename, rotate and revoke actions (also a sub-organisation's, on the partner page). */
export const KeyTable = (props: { label: string; keys: ReadonlyArray<Key>; writable: boolean; onChanged: () => void; onMinted: (m: Minted) => void }) => (
  <TableWrap label={props.label}>
    <table>
      <thead>
        <tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Status</th><th scope="col">Scopes</th><th scope="col">Models</th><th scope="col">Last used</th>{props.writable ? <th scope="col">Actions</th> : null}</tr>
      </thead>
      <tbody>
        {props.keys.map((k) => <KeyRow key={k.id} k={k} writable={props.writable} onChanged={props.onChanged} onMinted={props.onMinted} />)}
      </tbody>
    </table>
  </TableWrap>
)

const CreateKey = ({ onCreated }: { onCreated: (m: Minted) => void }) => {
  const [options] = useLoad(async () => {
    const [scopes, models] = await Promise.all([
      call<{ scopes: ReadonlyArray<{ name: string; description: string }> }>("GET", "/api/v1/keys/scopes"),
      call<{ data: ReadonlyArray<{ id: string }> }>("GET", "/api/v1/models")
    ])
    return { scopes: scopes.scopes, models: models.data.map((m) => m.id) }
  })
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlyArray<string>>([])
  const [models, setModels] = useState<ReadonlyArray<string>>([])
  const action = useAction()
  const toggle = (list: ReadonlyArray<string>, item: string) => (list.includes(item) ? list.filter((x) => x !== item) : [...list, item])
  const submit = async (event: Event) => {
    event.preventDefault()
    const created = await action.run(() =>
      rest.keys.create({ ...(name.trim() === "" ? {} : { name: name.trim() }), permissions: [...scopes], ...(models.length === 0 ? {} : { models: [...models] }) })
    )
    if (created !== undefined) {
      setName("")
      setScopes([])
      setModels([])
      onCreated(created as Minted)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <label>Name<input type="text" name="key-name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
      {options.state === "loading" ? <Loading what="scopes and models" /> : null}
      {options.state === "error" ? <ErrorNotice error={options.error} /> : null}
      {options.state === "ready"
        ? (
          <>
            <fieldset>
              <legend>Scopes <span class="muted small">(none ticked: every route)</span></legend>
              {options.data.scopes.map((s) => (
                <label class="check" key={s.name}>
                  <input type="checkbox" name="scope" value={s.name} checked={scopes.includes(s.name)} onChange={() => setScopes(toggle(scopes, s.name))} />
                  <span><code>{s.name}</code> — {s.description}</span>
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>Model allowlist <span class="muted small">(none ticked: every model)</span></legend>
              {options.data.models.length === 0 ? <p class="muted">This gateway lists no models.</p> : null}
              {options.data.models.map((m) => (
                <label class="check" key={m}>
                  <input type="checkbox" name="model" value={m} checked={models.includes(m)} onChange={() => setModels(toggle(models, m))} />
                  <span>{m}</span>
                </label>
              ))}
            </fieldset>
          </>
        )
        : null}
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Creating…" : "Create key"}</button>
    </form>
  )
}

const KeyRow = ({ k, writable, onChanged, onMinted }: { k: Key; writable: boolean; onChanged: () => void; onMinted: (m: Minted) => void }) => {
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState(k.name ?? "")
  const action = useAction()
  const rename = async (event: Event) => {
    event.preventDefault()
    if ((await action.run(() => rest.keys.update(k.id, { name: name.trim() === "" ? null : name.trim() }))) !== undefined) {
      setEditing(false)
      onChanged()
    }
  }
  const label = k.name ?? k.key_prefix
  return (
    <tr data-key-prefix={k.key_prefix}>
      <td>
        {editing
          ? (
            <form class="inline" onSubmit={rename}>
              <label class="sr-only" for={`name-${k.id}`}>New name for {label}</label>
              <input id={`name-${k.id}`} type="text" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
              <button type="submit" disabled={action.busy}>Save</button>
              <button type="button" onClick={() => setEditing(false)}>Cancel</button>
            </form>
          )
          : (k.name ?? <span class="muted">unnamed</span>)}
        {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      </td>
      <td><code>{k.key_prefix}</code></td>
      <td><span class={`badge ${k.status}`}>{k.status}</span>{k.rotation_due && k.status === "active" ? <span class="badge warning">rotation due</span> : null}</td>
      <td>{k.permissions.length === 0 ? "all" : k.permissions.join(", ")}</td>
      <td>{k.models === null || k.models.length === 0 ? "all" : k.models.join(", ")}</td>
      <td>{dateTime(k.last_used_at)}</td>
      {writable
        ? (
          <td class="row-actions">
            {k.status === "active"
              ? (
                <>
                  <button type="button" onClick={() => setEditing(true)} aria-label={`Rename ${label}`}>Rename</button>
                  <ConfirmButton label="Rotate" title={`Rotate ${label}?`} confirmLabel="Rotate now" onConfirm={async () => {
                    const minted = await action.run(() => rest.keys.rotate(k.id))
                    if (minted !== undefined) onMinted(minted as Minted)
                  }}>
                    <p>A new key replaces <code>{k.key_prefix}</code> with the same name, scopes and models.</p>
                    <p><strong>The current key stops working immediately: deploy the new key at once.</strong></p>
                  </ConfirmButton>
                  <ConfirmButton label="Revoke" danger title={`Revoke ${label}?`} confirmLabel="Revoke key" onConfirm={async () => {
                    if ((await action.run(() => rest.keys.revoke(k.id))) !== undefined) onChanged()
                  }}>
                    <p>Calls with <code>{k.key_prefix}</code> are refused from now on (<code>key_revoked</code>). This cannot be undone.</p>
                  </ConfirmButton>
                </>
              )
              : <span class="muted small">no actions</span>}
          </td>
        )
        : null}
    </tr>
  )
}
