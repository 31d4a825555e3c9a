/** @jsxImportSource preact */
// Partner accounts: sub-organisations with their own wallet and keys, one level below yours. Create one, see its
// balance and last 30 days of usage, and add people to it.
import type { GatewayResponse } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { type Account, account, call, can, rest } from "../api.ts"
import { Empty, ErrorNotice, Loading, Notice, ShownOnce, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { KeyTable, type Minted } from "./Keys.tsx"
import { count, dateTime, microsToUsd, modelLabel, usd } from "../format.ts"

type SubOrganisation = GatewayResponse<"listSubOrganisations">["organisations"][number]

const ROLES = ["member", "admin", "owner"] as const

export const Organisations = ({ me }: { me: Account }) => {
  useTitle("Sub-organisations")
  const [list, reload] = useLoad(() => call<GatewayResponse<"listSubOrganisations">>("GET", "/api/v1/orgs/sub"))
  const writable = can(me, "abilities:write")
  return (
    <section>
      <h1>Sub-organisations</h1>
      <p class="muted">For partners: each sub-organisation has its own wallet, keys and usage, one level below yours. It never sees yours or its siblings'.</p>
      {writable ? <CreateSubOrganisation onCreated={reload} /> : null}
      <h2>Your sub-organisations</h2>
      {list.state === "loading" ? <Loading what="sub-organisations" /> : null}
      {list.state === "error" ? <ErrorNotice error={list.error} onRetry={reload} /> : null}
      {list.state === "ready" && list.data.organisations.length === 0 ? <Empty><p>No sub-organisations yet.</p></Empty> : null}
      {list.state === "ready" && list.data.organisations.length > 0
        ? <ul class="cards">{list.data.organisations.map((o) => <SubOrganisationCard key={o.org_id} org={o} writable={writable} canReadKeys={can(me, "ability:keys.read")} canWriteKeys={can(me, "ability:keys.write")} />)}</ul>
        : null}
    </section>
  )
}

const CreateSubOrganisation = ({ onCreated }: { onCreated: () => void }) => {
  const [name, setName] = useState("")
  const action = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    if ((await action.run(() => call("POST", "/api/v1/orgs/sub", { name: name.trim() }))) !== undefined) {
      setName("")
      onCreated()
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-sub-title">
      <h2 id="create-sub-title">Create a sub-organisation</h2>
      <label>Name<input type="text" name="sub-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Creating…" : "Create"}</button>
    </form>
  )
}

const SubOrganisationCard = ({ org, writable, canReadKeys, canWriteKeys }: { org: SubOrganisation; writable: boolean; canReadKeys: boolean; canWriteKeys: boolean }) => {
  const [open, setOpen] = useState(false)
  return (
    <li class="card" data-testid="sub-organisation">
      <p><strong>{org.name}</strong> <span class="muted small"><code>{org.org_id}</code> · created {dateTime(org.created_at)}</span></p>
      <p>Balance: <strong>{usd(org.balance_usd)}</strong></p>
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? "Hide details" : "Usage, keys and members"}</button>
      {open ? <SubOrganisationDetails org={org} writable={writable} canReadKeys={canReadKeys} canWriteKeys={canWriteKeys} /> : null}
    </li>
  )
}

const SubOrganisationDetails = ({ org, writable, canReadKeys, canWriteKeys }: { org: SubOrganisation; writable: boolean; canReadKeys: boolean; canWriteKeys: boolean }) => {
  const [usage, reload] = useLoad(() => call<GatewayResponse<"getSubOrganisationUsage">>("GET", `/api/v1/orgs/sub/${encodeURIComponent(org.org_id)}/usage?limit=1`), [org.org_id])
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<string>("member")
  const [added, setAdded] = useState<string | undefined>(undefined)
  // An invited address whose e-mail the mail server did not take: the link can be sent again from here.
  const [unsent, setUnsent] = useState<string | undefined>(undefined)
  const action = useAction()
  const resend = useAction()
  const addMember = async (event: Event) => {
    event.preventDefault()
    const invited = email.trim()
    const result = await action.run(() => call<GatewayResponse<"addMember", 201>>("POST", `/api/v1/orgs/${encodeURIComponent(org.org_id)}/members`, { email: invited, role }))
    if (result !== undefined) {
      setUnsent(result.created && !result.verification_email_sent ? invited : undefined)
      setAdded(
        !result.created
          ? `${invited} now belongs to ${org.name} too.`
          : result.verification_email_sent
          ? `${invited} was invited: a verification e-mail lets them set a password.`
          : `${invited} was added, but the invitation e-mail could not be sent: the mail server is unavailable. Send it again in a few minutes.`
      )
      setEmail("")
    }
  }
  const sendAgain = async () => {
    if (unsent === undefined) return
    if ((await resend.run(() => account.resendVerification(unsent))) !== undefined) {
      setAdded(`The invitation e-mail to ${unsent} was sent.`)
      setUnsent(undefined)
    }
  }
  const byModel = new Map<string, { calls: number; micros: number }>()
  if (usage.state === "ready") {
    for (const d of usage.data.summary) {
      const label = modelLabel(d.provider, d.model)
      const t = byModel.get(label) ?? { calls: 0, micros: 0 }
      byModel.set(label, { calls: t.calls + d.calls, micros: t.micros + d.billed_micros })
    }
  }
  return (
    <div>
      <h3>Last 30 days</h3>
      {usage.state === "loading" ? <Loading what="usage" /> : null}
      {usage.state === "error" ? <ErrorNotice error={usage.error} onRetry={reload} /> : null}
      {usage.state === "ready" && byModel.size === 0 ? <p class="muted">No calls in the last 30 days.</p> : null}
      {usage.state === "ready" && byModel.size > 0
        ? (
          <TableWrap label={`Usage of ${org.name}`}>
            <table>
              <thead><tr><th scope="col">Model</th><th scope="col">Calls</th><th scope="col">Spend</th></tr></thead>
              <tbody>{[...byModel].map(([model, t]) => <tr key={model}><td>{model}</td><td>{count(t.calls)}</td><td>{microsToUsd(t.micros)}</td></tr>)}</tbody>
            </table>
          </TableWrap>
        )
        : null}
      {canReadKeys ? <SubOrganisationKeys org={org} writable={canWriteKeys} /> : null}
      {writable
        ? (
          <form class="inline-block" onSubmit={addMember} aria-label={`Add a person to ${org.name}`}>
            <h3>Add a person</h3>
            <label>E-mail<input type="email" name="member-email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
            <label>Role
              <select name="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
                {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
              </select>
            </label>
            {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
            {added !== undefined ? <Notice kind={unsent === undefined ? "success" : "warning"}>{added}</Notice> : null}
            {unsent !== undefined ? <button type="button" disabled={resend.busy} onClick={sendAgain}>{resend.busy ? "Sending…" : "Send the invitation again"}</button> : null}
            {resend.error !== undefined ? <ErrorNotice error={resend.error} /> : null}
            <button type="submit" disabled={action.busy}>{action.busy ? "Adding…" : "Add person"}</button>
          </form>
        )
        : null}
    </div>
  )
}

/**
 * The sub-organisation's gateway keys (its calls bill its wallet): create one (shown once), and rename, rotate or
 * revoke them as on the keys page. The gateway lets a parent reach its sub-organisations' keys and nothing above.
 */
const SubOrganisationKeys = ({ org, writable }: { org: SubOrganisation; writable: boolean }) => {
  const [keys, reload] = useLoad(() => rest.keys.list({ org_id: org.org_id }) as Promise<GatewayResponse<"listKeys">>, [org.org_id])
  const [name, setName] = useState("")
  const [minted, setMinted] = useState<Minted | undefined>(undefined)
  const action = useAction()
  const shown = (m: Minted) => {
    setMinted(m)
    reload()
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    const created = await action.run(() => rest.keys.create({ org_id: org.org_id, ...(name.trim() === "" ? {} : { name: name.trim() }) }))
    if (created !== undefined) {
      setName("")
      shown(created as Minted)
    }
  }
  return (
    <div>
      <h3>Keys of {org.name}</h3>
      {minted !== undefined
        ? (
          <ShownOnce label={minted.replaces !== undefined ? `New key for ${org.name} (${minted.key_prefix})` : `Key ${minted.key_prefix} of ${org.name}`} value={minted.api_key}>
            {minted.replaces !== undefined ? <p><strong>Deploy the new key at once:</strong> the previous key already stopped working.</p> : null}
          </ShownOnce>
        )
        : null}
      {keys.state === "loading" ? <Loading what={`keys of ${org.name}`} /> : null}
      {keys.state === "error" ? <ErrorNotice error={keys.error} onRetry={reload} /> : null}
      {keys.state === "ready" && keys.data.keys.length === 0 ? <p class="muted">No keys yet.</p> : null}
      {keys.state === "ready" && keys.data.keys.length > 0
        ? <KeyTable label={`Keys of ${org.name}`} keys={keys.data.keys} writable={writable} onChanged={reload} onMinted={shown} />
        : null}
      {writable
        ? (
          <form class="inline-block" onSubmit={submit} aria-label={`Create a key for ${org.name}`}>
            <h3>Create a key for {org.name}</h3>
            <label>Key name<input type="text" name="sub-key-name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
            {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
            <button type="submit" disabled={action.busy}>{action.busy ? "Creating…" : "Create key"}</button>
          </form>
        )
        : null}
    </div>
  )
}
