/** @jsxImportSource preact */
// The wallet: balance, top-up (Stripe Checkout, or the development payments provider confirmed here), licence
// codes, and the ledger of every credit and debit.
import type { GatewayResponse } from "@privacy-relay/sdk"
import { useState } from "preact/hooks"
import { type Account, can, rest } from "../api.ts"
import { Empty, ErrorNotice, Loading, Notice, TableWrap, useAction, useLoad, useTitle } from "../components/ui.tsx"
import { dateTime, usd, usdCents } from "../format.ts"

type LedgerEntry = GatewayResponse<"getLedger">["entries"][number]

interface Checkout {
  readonly checkout_id: string
  readonly checkout_url: string
  readonly amount_usd: string
  readonly provider: string
}

export const Billing = ({ me }: { me: Account }) => {
  useTitle("Billing")
  const [balance, reloadBalance] = useLoad(() => rest.billing.balance() as Promise<{ balance_usd: string }>)
  const [ledger, reloadLedger] = useLoad(() => rest.billing.ledger({ limit: 50 }) as Promise<{ entries: ReadonlyArray<LedgerEntry>; next_cursor: string | null }>)
  const [message, setMessage] = useState<string | undefined>(undefined)
  const [older, setOlder] = useState<{ entries: ReadonlyArray<LedgerEntry>; cursor: string | null } | undefined>(undefined)
  const more = useAction()
  const loadOlder = async (cursor: string) => {
    const page = await more.run(() => rest.billing.ledger({ limit: 50, cursor }) as Promise<{ entries: ReadonlyArray<LedgerEntry>; next_cursor: string | null }>)
    if (page !== undefined) setOlder({ entries: [...(older?.entries ?? []), ...page.entries], cursor: page.next_cursor })
  }
  const writable = can(me, "ability:billing.write")
  const credited = (text: string) => {
    setMessage(text)
    setOlder(undefined)
    reloadBalance()
    reloadLedger()
  }
  return (
    <section>
      <h1>Billing</h1>
      <dl class="tiles">
        <div>
          <dt>Balance</dt>
          <dd data-testid="billing-balance" title={balance.state === "ready" ? `exactly ${usd(balance.data.balance_usd)}` : undefined}>
            {balance.state === "ready" ? usdCents(balance.data.balance_usd) : balance.state === "loading" ? "…" : "unavailable"}
          </dd>
        </div>
      </dl>
      {balance.state === "error" ? <ErrorNotice error={balance.error} onRetry={reloadBalance} /> : null}
      {message !== undefined ? <Notice kind="success">{message}</Notice> : null}
      {writable ? <div class="two"><TopUp onCredited={credited} /><Redeem onCredited={credited} /></div> : <p>Your role can read billing but not add credit.</p>}
      <h2>Ledger</h2>
      {ledger.state === "loading" ? <Loading what="the ledger" /> : null}
      {ledger.state === "error" ? <ErrorNotice error={ledger.error} onRetry={reloadLedger} /> : null}
      {ledger.state === "ready" && ledger.data.entries.length === 0 ? <Empty><p>No credits or charges yet.</p></Empty> : null}
      {ledger.state === "ready" && ledger.data.entries.length > 0
        ? (
          <TableWrap label="Ledger">
            <table>
              <thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">Amount</th><th scope="col">Reference</th></tr></thead>
              <tbody>
                {[...ledger.data.entries, ...(older?.entries ?? [])].map((e) => (
                  <tr key={e.id} data-testid="ledger-row">
                    <td>{dateTime(e.created_at)}</td>
                    <td>{e.kind.replaceAll("_", " ")}</td>
                    <td class={e.amount_micros < 0 ? "debit" : "credit"}>{e.amount_micros < 0 ? "" : "+"}{usd(e.amount_usd)}</td>
                    <td><code class="wrap">{e.reference ?? "—"}</code></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )
        : null}
      {more.error !== undefined ? <ErrorNotice error={more.error} /> : null}
      {ledger.state === "ready" && (older === undefined ? ledger.data.next_cursor : older.cursor) !== null
        ? <button type="button" disabled={more.busy} onClick={() => loadOlder((older === undefined ? ledger.data.next_cursor : older.cursor)!)}>{more.busy ? "Loading…" : "Load older entries"}</button>
        : null}
    </section>
  )
}

const TopUp = ({ onCredited }: { onCredited: (message: string) => void }) => {
  const [amount, setAmount] = useState("10")
  const [checkout, setCheckout] = useState<Checkout | undefined>(undefined)
  const action = useAction()
  const start = async (event: Event) => {
    event.preventDefault()
    const started = await action.run(() => rest.billing.topUp({ amount_usd: amount.trim() })) as Checkout | undefined
    if (started === undefined) return
    // A real payment provider takes the payment on its own page; the development provider is confirmed below.
    if (started.provider !== "dev") location.assign(started.checkout_url)
    else setCheckout(started)
  }
  const confirm = async () => {
    if (checkout === undefined) return
    const done = await action.run(() => rest.billing.completeDevCheckout(checkout.checkout_id))
    if (done !== undefined) {
      setCheckout(undefined)
      onCredited(`${usd(checkout.amount_usd)} added to your balance.`)
    }
  }
  return (
    <form class="card" onSubmit={start} aria-labelledby="topup-title">
      <h2 id="topup-title">Top up</h2>
      <label>Amount in USD<input type="text" inputMode="decimal" name="amount" required pattern="[0-9]+(\.[0-9]{1,2})?" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} /></label>
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      {checkout === undefined
        ? <button class="primary" type="submit" disabled={action.busy}>{action.busy ? "Starting…" : "Continue to payment"}</button>
        : (
          <div class="notice warning" role="status">
            <p>Development payments: no money moves. Confirm to credit {usd(checkout.amount_usd)}.</p>
            <button class="primary" type="button" disabled={action.busy} onClick={confirm}>Confirm payment (development)</button>
          </div>
        )}
    </form>
  )
}

const Redeem = ({ onCredited }: { onCredited: (message: string) => void }) => {
  const [code, setCode] = useState("")
  const action = useAction()
  const submit = async (event: Event) => {
    event.preventDefault()
    const done = await action.run(() => rest.billing.redeemLicence({ code: code.trim() })) as { amount_usd: string } | undefined
    if (done !== undefined) {
      setCode("")
      onCredited(`Licence redeemed: ${usd(done.amount_usd)} added.`)
    }
  }
  return (
    <form class="card" onSubmit={submit} aria-labelledby="redeem-title">
      <h2 id="redeem-title">Redeem a licence code</h2>
      <label>Licence code<input type="text" name="licence" required autocomplete="off" value={code} onInput={(e) => setCode(e.currentTarget.value)} /></label>
      {action.error !== undefined ? <ErrorNotice error={action.error} /> : null}
      <button type="submit" disabled={action.busy}>{action.busy ? "Redeeming…" : "Redeem"}</button>
    </form>
  )
}
