/** @jsxImportSource preact */
// The operator's admin view (`ability:admin`: an account given the operator flag with `cli.ts account operator
// grant`): every organisation, every key's metadata (never a key) and the receipt chain verifier's state, read-only
// and paged. Anyone else gets the gateway's 403 `insufficient_ability`, shown as it is.
import type { GatewayResponse, GatewaySchemas } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { call } from "../api.ts"
import { Empty, ErrorNotice, Loading, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { count, dateTime, usd } from "../format.ts"

const PAGE = 50

const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") search.set(k, String(v))
  return search.toString()
}

/** A keyset-paged list: the first page loads with `deps`; "load more" appends the next one. */
const usePaged = <Page extends { next_cursor: string | null }, Item>(
  fetchPage: (cursor: string | undefined) => Promise<Page>,
  items: (page: Page) => ReadonlyArray<Item>,
  deps: ReadonlyArray<unknown>
) => {
  const [first, reload] = useLoad(() => fetchPage(undefined), deps)
  const [more, setMore] = useState<{ for: unknown; items: ReadonlyArray<Item>; cursor: string | null } | undefined>(undefined)
  const action = useAction()
  const current = first.state === "ready" && more?.for === first.data ? more : undefined
  const cursor = first.state === "ready" ? (current === undefined ? first.data.next_cursor : current.cursor) : null
  const loadMore = async () => {
    if (cursor === null || first.state !== "ready") return
    const page = await action.run(() => fetchPage(cursor))
    if (page !== undefined) setMore({ for: first.data, items: [...(current?.items ?? []), ...items(page)], cursor: page.next_cursor })
  }
  const all = first.state === "ready" ? [...items(first.data), ...(current?.items ?? [])] : []
  return { first, reload, all, cursor, loadMore, more: action }
}

const LoadMore = ({ paged, what }: { paged: { cursor: string | null; loadMore: () => void; more: { busy: boolean; error: unknown } }; what: string }) => (
  <>
    {paged.more.error !== undefined ? <ErrorNotice error={paged.more.error} /> : null}
    {paged.cursor !== null
      ? <button type="button" disabled={paged.more.busy} onClick={paged.loadMore}>{paged.more.busy ? "Loading…" : `Load more ${what}`}</button>
      : null}
  </>
)

export const Admin = () => {
  useTitle("Admin")
  return (
    <section>
      <h1>Admin</h1>
      <p class="muted">Operator view of this gateway: every organisation, every key's metadata and the receipt chain verifier. Read-only; keys themselves are never shown.</p>
      <ChainVerifierState />
      <Organisations />
      <Keys />
    </section>
  )
}

type ChainPage = GatewayResponse<"adminChainState">

const ChainVerifierState = () => {
  const [brokenOnly, setBrokenOnly] = useState(false)
  const paged = usePaged(
    (cursor) => call<ChainPage>("GET", `/api/admin/chains?${query({ limit: PAGE, cursor, state: brokenOnly ? "broken" : undefined })}`),
    (page) => page.chains,
    [brokenOnly]
  )
  const { first } = paged
  return (
    <>
      <h2>Receipt chain verifier</h2>
      {first.state === "loading" ? <Loading what="the chain verifier's state" /> : null}
      {first.state === "error" ? <ErrorNotice error={first.error} onRetry={paged.reload} /> : null}
      {first.state === "ready"
        ? (
          <>
            <dl class="facts" data-testid="chain-summary">
              <dt>Chains</dt><dd>{count(first.data.summary.chains)}</dd>
              <dt>Broken now</dt>
              <dd>
                {first.data.summary.open_incidents === 0
                  ? <span class="badge active">none</span>
                  : <span class="badge revoked">{count(first.data.summary.open_incidents)} open incident{first.data.summary.open_incidents === 1 ? "" : "s"}</span>}
              </dd>
              <dt>Repaired incidents</dt><dd>{count(first.data.summary.repaired_incidents)}</dd>
              <dt>Last pass (this node)</dt>
              <dd>
                {first.data.summary.last_pass === null
                  ? <span class="muted">not run yet since this gateway started</span>
                  : `${dateTime(first.data.summary.last_pass.finished_at)} · ${first.data.summary.last_pass.full ? "full" : "incremental"} · ${count(first.data.summary.last_pass.chains)} chains, ${count(first.data.summary.last_pass.broken)} broken, ${count(first.data.summary.last_pass.duration_ms)} ms`}
              </dd>
            </dl>
            <label class="check">
              <input type="checkbox" name="broken-only" checked={brokenOnly} onChange={(e) => setBrokenOnly(e.currentTarget.checked)} />
              <span>Only chains with an open incident</span>
            </label>
            {paged.all.length === 0
              ? <Empty><p>{brokenOnly ? "No chain is broken." : "No receipt chains yet."}</p></Empty>
              : (
                <TableWrap label="Receipt chains">
                  <table>
                    <thead><tr><th scope="col">Chain</th><th scope="col">Kind</th><th scope="col">Organisation</th><th scope="col">Receipts</th><th scope="col">State</th></tr></thead>
                    <tbody>
                      {paged.all.map((c) => (
                        <tr key={c.chain_id} data-testid="admin-chain">
                          <td class="wrap"><code>{c.chain_id}</code></td>
                          <td>{c.kind}</td>
                          <td class="wrap"><code>{c.org_id}</code></td>
                          <td>{count(c.last_seq)}</td>
                          <td>
                            {c.incident === null
                              ? <span class="badge active">intact</span>
                              : <><span class="badge revoked">broken at seq {c.incident.seq ?? "?"}</span> <span class="small">{c.incident.reason} (since {dateTime(c.incident.detected_at)})</span></>}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              )}
            <LoadMore paged={paged} what="chains" />
          </>
        )
        : null}
    </>
  )
}

const Organisations = () => {
  const paged = usePaged(
    (cursor) => call<GatewayResponse<"adminListOrganisations">>("GET", `/api/admin/orgs?${query({ limit: PAGE, cursor })}`),
    (page) => page.organisations,
    []
  )
  const { first } = paged
  return (
    <>
      <h2>Organisations</h2>
      {first.state === "loading" ? <Loading what="organisations" /> : null}
      {first.state === "error" ? <ErrorNotice error={first.error} onRetry={paged.reload} /> : null}
      {first.state === "ready" && paged.all.length === 0 ? <Empty><p>No organisations yet.</p></Empty> : null}
      {first.state === "ready" && paged.all.length > 0
        ? (
          <TableWrap label="Organisations">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Parent</th><th scope="col">Balance</th><th scope="col">Active keys</th><th scope="col">People</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {paged.all.map((o: GatewaySchemas["AdminOrganisation"]) => (
                  <tr key={o.org_id} data-testid="admin-org">
                    <td>{o.name}</td>
                    <td class="wrap"><code>{o.org_id}</code></td>
                    <td class="wrap">{o.parent_id === null ? <span class="muted">—</span> : <code>{o.parent_id}</code>}</td>
                    <td>{usd(o.balance_usd)}</td>
                    <td>{count(o.keys_active)}</td>
                    <td>{count(o.members)}</td>
                    <td>{dateTime(o.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
        : null}
      <LoadMore paged={paged} what="organisations" />
    </>
  )
}

const STATUSES = ["", "active", "revoked", "rotated"] as const

const Keys = () => {
  const [status, setStatus] = useState<string>("")
  const [org, setOrg] = useState("")
  const [applied, setApplied] = useState({ status: "", org: "" })
  const paged = usePaged(
    (cursor) => call<GatewayResponse<"adminListKeys">>("GET", `/api/admin/keys?${query({ limit: PAGE, cursor, status: applied.status, org_id: applied.org.trim() })}`),
    (page) => page.keys,
    [applied]
  )
  const { first } = paged
  return (
    <>
      <h2>Keys</h2>
      <form class="filters" aria-label="Filter keys" onSubmit={(e) => {
        e.preventDefault()
        setApplied({ status, org })
      }}>
        <label>Status
          <select name="admin-key-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            {STATUSES.map((s) => <option key={s} value={s}>{s === "" ? "any" : s}</option>)}
          </select>
        </label>
        <label>Organisation id<input type="text" name="admin-key-org" value={org} onInput={(e) => setOrg(e.currentTarget.value)} /></label>
        <button type="submit">Filter</button>
      </form>
      {first.state === "loading" ? <Loading what="keys" /> : null}
      {first.state === "error" ? <ErrorNotice error={first.error} onRetry={paged.reload} /> : null}
      {first.state === "ready" && paged.all.length === 0 ? <Empty><p>No keys match.</p></Empty> : null}
      {first.state === "ready" && paged.all.length > 0
        ? (
          <TableWrap label="All keys">
            <table>
              <thead><tr><th scope="col">Prefix</th><th scope="col">Name</th><th scope="col">Organisation</th><th scope="col">Status</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th></tr></thead>
              <tbody>
                {paged.all.map((k: GatewaySchemas["AdminKey"]) => (
                  <tr key={k.id} data-testid="admin-key" data-key-prefix={k.key_prefix}>
                    <td><code>{k.key_prefix}</code></td>
                    <td>{k.name ?? <span class="muted">unnamed</span>}</td>
                    <td>{k.org_name} <span class="muted small wrap"><code>{k.org_id}</code></span></td>
                    <td><span class={`badge ${k.status}`}>{k.status}</span></td>
                    <td>{k.permissions.length === 0 ? "all" : k.permissions.join(", ")}</td>
                    <td>{dateTime(k.created_at)}</td>
                    <td>{dateTime(k.last_used_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
        : null}
      <LoadMore paged={paged} what="keys" />
    </>
  )
}
