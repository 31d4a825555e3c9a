/** @jsxImportSource preact */
// Signed receipts of the organisation's calls: each one verified here, in the browser, against the gateway's
// published keys (nothing is taken on the gateway's word), the chain linkage of what is shown, and the
// transparency-log inclusion proof of one receipt.
import { type GatewaySchemas, verifyChain, verifyInclusionProof, verifyReceipt } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { jwks, rest } from "../api.ts"
import { Empty, ErrorNotice, Loading, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { dateTime, modelLabel } from "../format.ts"
import { navigate, onLinkClick } from "../router.ts"

type ReceiptV1 = GatewaySchemas["ReceiptV1"]

type Verdict = { readonly valid: boolean; readonly reason: string | null }

export const VerifyBadge = ({ verdict }: { verdict: Verdict | undefined }) =>
  verdict === undefined
    ? <span class="badge pending">checking…</span>
    : verdict.valid
    ? <span class="badge verified" title="Signature and fields checked in this browser against the gateway's published keys">verified</span>
    : <span class="badge failed" title={verdict.reason ?? ""}>not valid</span>

/** Receipts of one chain, oldest first, and whether consecutive ones link (seq + prev_hash) and verify. */
const chainStatuses = async (receipts: ReadonlyArray<ReceiptV1>) => {
  const byChain = new Map<string, Array<ReceiptV1>>()
  for (const r of receipts) byChain.set(r.chain.chain_id, [...(byChain.get(r.chain.chain_id) ?? []), r])
  return Promise.all([...byChain].map(async ([chainId, list]) => {
    const ordered = [...list].sort((a, b) => a.chain.seq - b.chain.seq)
    return { chainId, result: await verifyChain(ordered, { jwks }) }
  }))
}

const toRfc3339 = (date: string, endOfDay: boolean) => (date === "" ? undefined : `${date}T${endOfDay ? "23:59:59" : "00:00:00"}Z`)

export const Receipts = () => {
  useTitle("Receipts")
  const [model, setModel] = useState("")
  const [from, setFrom] = useState("")
  const [to, setTo] = useState("")
  const [query, setQuery] = useState<{ model?: string; from?: string; to?: string }>({})
  const [list, reload] = useLoad(async () => {
    const page = await rest.receipts.list({ limit: 50, ...query }) as { receipts: ReadonlyArray<ReceiptV1>; next_cursor: string | null }
    const verdicts = new Map<string, Verdict>()
    await Promise.all(page.receipts.map(async (r) => verdicts.set(r.jti, await verifyReceipt(r, { jwks }))))
    const filtered = query.model !== undefined || query.from !== undefined || query.to !== undefined
    return { ...page, verdicts, chains: filtered ? undefined : await chainStatuses(page.receipts) }
  }, [JSON.stringify(query)])
  const [older, setOlder] = useState<{ receipts: ReadonlyArray<ReceiptV1>; verdicts: Map<string, Verdict>; cursor: string | null } | undefined>(undefined)
  const more = useAction()
  const loadOlder = async (cursor: string) => {
    const page = await more.run(async () => {
      const next = await rest.receipts.list({ limit: 50, cursor, ...query }) as { receipts: ReadonlyArray<ReceiptV1>; next_cursor: string | null }
      const verdicts = new Map(older?.verdicts ?? [])
      await Promise.all(next.receipts.map(async (r) => verdicts.set(r.jti, await verifyReceipt(r, { jwks }))))
      return { receipts: [...(older?.receipts ?? []), ...next.receipts], verdicts, cursor: next.next_cursor }
    })
    if (page !== undefined) setOlder(page)
  }
  const apply = (event: Event) => {
    event.preventDefault()
    setOlder(undefined)
    setQuery({
      ...(model.trim() === "" ? {} : { model: model.trim() }),
      ...(toRfc3339(from, false) === undefined ? {} : { from: toRfc3339(from, false) }),
      ...(toRfc3339(to, true) === undefined ? {} : { to: toRfc3339(to, true) })
    })
  }
  return (
    <section>
      <h1>Receipts</h1>
      <p class="muted">Every completed call is sealed in a signed receipt. The badge is computed in this browser from the receipt and the gateway's public keys.</p>
      <JtiLookup />
      <form class="filters" onSubmit={apply} aria-label="Filter receipts">
        <label>Model<input type="text" name="model" value={model} onInput={(e) => setModel(e.currentTarget.value)} /></label>
        <label>From<input type="date" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} /></label>
        <label>To<input type="date" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} /></label>
        <button type="submit">Apply</button>
      </form>
      {list.state === "loading" ? <Loading what="receipts" /> : null}
      {list.state === "error" ? <ErrorNotice error={list.error} onRetry={reload} /> : null}
      {list.state === "ready" && list.data.receipts.length === 0 ? <Empty><p>No receipts{Object.keys(query).length > 0 ? " match these filters" : " yet: they appear after your first call"}.</p></Empty> : null}
      {list.state === "ready" && list.data.receipts.length > 0
        ? (
          <>
            {list.data.chains !== undefined
              ? (
                <ul class="chains" aria-label="Chain status">
                  {list.data.chains.map(({ chainId, result }) => (
                    <li key={chainId} class="wrap" data-testid="chain-status">
                      Chain <code>{chainId}</code>, seq {result.firstSeq}–{result.lastSeq}:{" "}
                      {result.valid ? <span class="badge verified">linked</span> : <span class="badge failed">broken at seq {result.break?.seq ?? "?"}</span>}
                      {result.valid ? null : <span class="muted small"> {result.break?.reason}</span>}
                    </li>
                  ))}
                </ul>
              )
              : <p class="muted small">Chain linkage is checked on the unfiltered list only (a filter leaves gaps in the chain).</p>}
            <TableWrap label="Receipts">
              <table>
                <thead><tr><th scope="col">Sealed</th><th scope="col">Receipt</th><th scope="col">Model</th><th scope="col">Tokens in / out</th><th scope="col">Key</th><th scope="col">Seq</th><th scope="col">Signature</th></tr></thead>
                <tbody>
                  {[...list.data.receipts, ...(older?.receipts ?? [])].map((r) => (
                    <tr key={r.jti} data-testid="receipt-row">
                      <td>{dateTime(r.iat)}</td>
                      <td><a href={`/portal/receipts/${r.jti}`} onClick={onLinkClick(`/receipts/${r.jti}`)}><code>{r.jti.slice(0, 12)}…</code></a></td>
                      <td>{modelLabel(r.claims.provider, r.claims.model)}</td>
                      <td>{r.claims.tokens_in} / {r.claims.tokens_out}</td>
                      <td><code>{r.sub}</code></td>
                      <td>{r.chain.seq}</td>
                      <td><VerifyBadge verdict={list.data.verdicts.get(r.jti) ?? older?.verdicts.get(r.jti)} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            {more.error !== undefined ? <ErrorNotice error={more.error} /> : null}
            {(older === undefined ? list.data.next_cursor : older.cursor) !== null
              ? <button type="button" disabled={more.busy} onClick={() => loadOlder((older === undefined ? list.data.next_cursor : older.cursor)!)}>{more.busy ? "Loading…" : "Load older receipts"}</button>
              : null}
          </>
        )
        : null}
    </section>
  )
}

/** The receipt of one call, by the jti its answer carried (`X-Service-Receipt-V2-JTI`). */
const JtiLookup = () => {
  const [jti, setJti] = useState("")
  const valid = /^[0-9a-f]{32}$/.test(jti.trim())
  return (
    <form class="filters" aria-label="Look up a receipt by JTI" onSubmit={(e) => { e.preventDefault(); if (valid) navigate(`/receipts/${jti.trim()}`) }}>
      <label>Receipt JTI<input type="text" name="jti" inputMode="text" autocomplete="off" spellcheck={false} placeholder="32 hexadecimal characters" value={jti} onInput={(e) => setJti(e.currentTarget.value)} aria-describedby="jti-help" /></label>
      <button type="submit" disabled={!valid}>Look up</button>
      <p id="jti-help" class="muted small">The <code>X-Service-Receipt-V2-JTI</code> header of a call's answer.</p>
    </form>
  )
}

export const ReceiptDetail = ({ jti }: { jti: string }) => {
  useTitle("Receipt")
  const [detail, reload] = useLoad(async () => {
    const receipt = await rest.receipts.get(jti) as ReceiptV1
    const verdict = await verifyReceipt(receipt, { jwks })
    let inclusion: { valid: boolean; reason: string | null } | { unavailable: string }
    try {
      const proof = await rest.receipts.inclusionProof(jti)
      inclusion = await verifyInclusionProof(proof, null, { jwks })
    } catch (error) {
      inclusion = { unavailable: (error as Error).message }
    }
    return { receipt, verdict, inclusion }
  }, [jti])
  return (
    <section>
      <p><a href="/portal/receipts" onClick={onLinkClick("/receipts")}>← All receipts</a></p>
      <h1>Receipt <code class="wrap">{jti}</code></h1>
      {detail.state === "loading" ? <Loading what="the receipt" /> : null}
      {detail.state === "error" ? <ErrorNotice error={detail.error} onRetry={reload} /> : null}
      {detail.state === "ready"
        ? (
          <>
            <dl class="facts">
              <dt>Signature</dt><dd><VerifyBadge verdict={detail.data.verdict} /></dd>
              <dt>Checks</dt>
              <dd>
                <ul>{detail.data.verdict.checks.map((c) => <li key={c.label}>{c.label}: <strong>{c.status}</strong>{c.detail === "" ? "" : ` (${c.detail})`}</li>)}</ul>
              </dd>
              <dt>Transparency log</dt>
              <dd data-testid="inclusion">
                {"unavailable" in detail.data.inclusion
                  ? <span class="muted">No inclusion proof: {detail.data.inclusion.unavailable}</span>
                  : detail.data.inclusion.valid
                  ? <span class="badge verified">included</span>
                  : <span class="badge failed">proof not valid: {detail.data.inclusion.reason}</span>}
              </dd>
              <dt>Sealed</dt><dd>{dateTime(detail.data.receipt.iat)}</dd>
              <dt>Chain</dt><dd><code>{detail.data.receipt.chain.chain_id}</code> seq {detail.data.receipt.chain.seq}</dd>
              <dt>Model</dt><dd>{modelLabel(detail.data.receipt.claims.provider, detail.data.receipt.claims.model)}</dd>
              <dt>Key</dt><dd><code>{detail.data.receipt.sub}</code></dd>
            </dl>
            <details>
              <summary>The receipt as signed (JSON)</summary>
              <pre class="json" tabIndex={0}>{JSON.stringify(detail.data.receipt, null, 2)}</pre>
            </details>
          </>
        )
        : null}
    </section>
  )
}
