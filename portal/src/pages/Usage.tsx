/** @jsxImportSource preact */
// Every metered call of the organisation, newest first: filter what is loaded, load more, export what is shown as CSV.
import type { GatewaySchemas } from "@privacy-relay/sdk"
import { useMemo, useState } from "preact/hooks"
import { rest } from "../api.ts"
import { Empty, ErrorNotice, Loading, TableWrap, useAction, useTitle, useLoad } from "../components/ui.tsx"
import { dateTime, microsToUsd, modelLabel, usd } from "../format.ts"
import { onLinkClick } from "../router.ts"

type UsageRecord = GatewaySchemas["Usage"]["records"][number]

const CSV_COLUMNS = ["finished_at", "request_id", "key_id", "provider", "model", "capability", "input_tokens", "output_tokens", "billed_usd", "partial", "estimated", "receipt_jti"] as const

/** RFC 4180: quote every field, double the quotes; a leading = + - @ is prefixed so a spreadsheet never runs it. */
const csvField = (value: unknown) => {
  const text = value === null || value === undefined ? "" : String(value)
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
  return `"${safe.replaceAll('"', '""')}"`
}

export const toCsv = (records: ReadonlyArray<UsageRecord>) =>
  [CSV_COLUMNS.join(","), ...records.map((r) => CSV_COLUMNS.map((c) => csvField(r[c])).join(","))].join("\r\n") + "\r\n"

export const Usage = () => {
  useTitle("Usage")
  const [pages, setPages] = useState<ReadonlyArray<UsageRecord>>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [first, reload] = useLoad(async () => {
    const [page, keyList] = await Promise.all([
      rest.billing.usage({ limit: 200 }) as Promise<{ records: ReadonlyArray<UsageRecord>; next_cursor: string | null }>,
      // Key names for the filter; a role that cannot read keys still sees the ids.
      (rest.keys.list() as Promise<{ keys: ReadonlyArray<{ id: string; key_prefix: string; name: string | null }> }>).catch(() => ({ keys: [] }))
    ])
    setPages(page.records)
    setCursor(page.next_cursor)
    return { page, keyLabels: new Map(keyList.keys.map((k) => [k.id, `${k.name ?? "unnamed"} (${k.key_prefix})`])) }
  })
  const more = useAction()
  const [model, setModel] = useState("")
  const [key, setKey] = useState("")
  const [from, setFrom] = useState("")
  const [to, setTo] = useState("")
  const shown = useMemo(() =>
    pages.filter((r) =>
      (model === "" || modelLabel(r.provider, r.model) === model) && (key === "" || r.key_id === key) &&
      (from === "" || r.finished_at.slice(0, 10) >= from) && (to === "" || r.finished_at.slice(0, 10) <= to)
    ), [pages, model, key, from, to])
  const models = [...new Set(pages.map((r) => modelLabel(r.provider, r.model)))].sort()
  const keys = [...new Set(pages.map((r) => r.key_id))].sort()
  const loadMore = async () => {
    if (cursor === null) return
    const page = await more.run(() => rest.billing.usage({ limit: 200, cursor }) as Promise<{ records: ReadonlyArray<UsageRecord>; next_cursor: string | null }>)
    if (page !== undefined) {
      setPages([...pages, ...page.records])
      setCursor(page.next_cursor)
    }
  }
  const download = () => {
    const url = URL.createObjectURL(new Blob([toCsv(shown)], { type: "text/csv;charset=utf-8" }))
    const a = document.createElement("a")
    a.href = url
    a.download = `usage-${new Date().toISOString().slice(0, 10)}.csv`
    a.click()
    setTimeout(() => URL.revokeObjectURL(url), 1000)
  }
  return (
    <section>
      <h1>Usage</h1>
      {first.state === "loading" ? <Loading what="usage" /> : null}
      {first.state === "error" ? <ErrorNotice error={first.error} onRetry={reload} /> : null}
      {first.state === "ready" && pages.length === 0 ? <Empty><p>No metered calls yet. They appear here as soon as a key makes a call.</p></Empty> : null}
      {first.state === "ready" && pages.length > 0
        ? (
          <>
            <form class="filters" aria-label="Filter usage" onSubmit={(e) => e.preventDefault()}>
              <label>Model
                <select name="model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
                  <option value="">All models</option>
                  {models.map((m) => <option key={m} value={m}>{m}</option>)}
                </select>
              </label>
              <label>Key
                <select name="key" value={key} onChange={(e) => setKey(e.currentTarget.value)}>
                  <option value="">All keys</option>
                  {keys.map((k) => <option key={k} value={k}>{first.state === "ready" ? first.data.keyLabels.get(k) ?? k : k}</option>)}
                </select>
              </label>
              <label>From<input type="date" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} /></label>
              <label>To<input type="date" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} /></label>
              <button type="button" onClick={download} disabled={shown.length === 0}>Export CSV ({shown.length})</button>
            </form>
            <p class="muted small" role="status">{shown.length} of {pages.length} loaded calls shown, {microsToUsd(shown.reduce((s, r) => s + r.billed_micros, 0))} billed.</p>
            <TableWrap label="Usage records">
              <table>
                <thead><tr><th scope="col">Finished</th><th scope="col">Model</th><th scope="col">Route</th><th scope="col">Tokens in / out</th><th scope="col">Billed</th><th scope="col">Receipt</th></tr></thead>
                <tbody>
                  {shown.map((r) => (
                    <tr key={r.id} data-testid="usage-row">
                      <td>{dateTime(r.finished_at)}</td>
                      <td>{modelLabel(r.provider, r.model)}</td>
                      <td>{r.capability}{r.partial ? <span class="badge warning">cut short</span> : null}</td>
                      <td>{r.input_tokens} / {r.output_tokens}{r.estimated ? <span class="muted small"> (estimated)</span> : null}</td>
                      <td>{usd(r.billed_usd)}</td>
                      <td>{r.receipt_jti === null ? <span class="muted">none</span> : <a href={`/portal/receipts/${r.receipt_jti}`} onClick={onLinkClick(`/receipts/${r.receipt_jti}`)}><code>{r.receipt_jti.slice(0, 12)}…</code></a>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            {more.error !== undefined ? <ErrorNotice error={more.error} /> : null}
            {cursor !== null ? <button type="button" disabled={more.busy} onClick={loadMore}>{more.busy ? "Loading…" : "Load older calls"}</button> : null}
          </>
        )
        : null}
    </section>
  )
}
