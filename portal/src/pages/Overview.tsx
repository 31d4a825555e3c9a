/** @jsxImportSource preact */
// The first page after sign-in: balance, this month's spend and calls, and the last 30 days by model.
import type { Account } from "../api.ts"
import { can, rest } from "../api.ts"
import { Empty, ErrorNotice, Loading, useLoad, useTitle } from "../components/ui.tsx"
import { type UsageDay, UsageChart } from "../components/UsageChart.tsx"
import { centsFromMicros, count, microsToUsd, monthStart, usd, usdCents } from "../format.ts"
import { onLinkClick } from "../router.ts"

const DAYS = 30

export const Overview = ({ me }: { me: Account }) => {
  useTitle("Overview")
  const to = new Date(Date.now() + 1000)
  const from = new Date(Math.min(monthStart().getTime(), to.getTime() - DAYS * 86_400_000))
  const [data, reload] = useLoad(async () => {
    const [balance, usage] = await Promise.all([rest.billing.balance(), rest.billing.usage({ from: from.toISOString(), to: to.toISOString(), limit: 1 })])
    return { balance, usage }
  })
  if (!can(me, "ability:billing.read")) return <section><h1>Overview</h1><p>Your role cannot read this organisation's billing.</p></section>
  return (
    <section>
      <h1>Overview</h1>
      {data.state === "loading" ? <Loading what="your balance and usage" /> : null}
      {data.state === "error" ? <ErrorNotice error={data.error} onRetry={reload} /> : null}
      {data.state === "ready" ? <OverviewBody balance={data.data.balance} usage={data.data.usage} from={from} to={to} /> : null}
    </section>
  )
}

interface FailureDay {
  readonly day: string
  readonly status: number
  readonly error_code: string
  readonly calls: number
}

const OverviewBody = ({ balance, usage, from, to }: { balance: any; usage: any; from: Date; to: Date }) => {
  const summary = usage.summary as ReadonlyArray<UsageDay>
  const month = monthStart().toISOString().slice(0, 10)
  const thisMonth = summary.filter((d) => d.day >= month)
  const spend = thisMonth.reduce((s, d) => s + d.billed_micros, 0)
  const calls = thisMonth.reduce((s, d) => s + d.calls, 0)
  // Refused after the key was accepted (insufficient balance or scope, provider errors...): each has a failed-call receipt.
  const failures = (usage.failures as ReadonlyArray<FailureDay>).filter((f) => f.day >= month)
  const refused = failures.reduce((s, f) => s + f.calls, 0)
  const byCode = new Map<string, number>()
  for (const f of failures) byCode.set(f.error_code, (byCode.get(f.error_code) ?? 0) + f.calls)
  const commonest = [...byCode].sort((a, b) => b[1] - a[1])[0]
  const chartFrom = new Date(to.getTime() - DAYS * 86_400_000)
  return (
    <>
      <dl class="tiles">
        <div><dt>Balance</dt><dd data-testid="balance" title={`exactly ${usd(balance.balance_usd)}`}>{usdCents(balance.balance_usd)}</dd></div>
        <div><dt>Spend this month</dt><dd data-testid="spend-month" title={`exactly ${microsToUsd(spend)}`}>{centsFromMicros(spend)}</dd></div>
        <div><dt>Calls this month</dt><dd data-testid="calls-month">{count(calls)}</dd></div>
        <div>
          <dt>Error rate this month</dt>
          <dd data-testid="error-rate">{calls + refused === 0 ? "—" : `${((refused / (calls + refused)) * 100).toFixed(1)}%`}</dd>
          <dd class="small muted">
            {refused === 0 ? "No refused calls." : `${count(refused)} of ${count(calls + refused)} calls refused; most often ${commonest![0]}.`}
          </dd>
        </div>
      </dl>
      <h2>Last {DAYS} days</h2>
      {summary.filter((d) => d.day >= chartFrom.toISOString().slice(0, 10)).length === 0
        ? (
          <Empty>
            <p>No calls in the last {DAYS} days. Create a key on the <a href="/portal/keys" onClick={onLinkClick("/keys")}>Keys</a> page and make a first call with the SDK.</p>
          </Empty>
        )
        : <UsageChart summary={summary} from={chartFrom} to={to} />}
    </>
  )
}
