/** @jsxImportSource preact */
// Spend per day, stacked by model (Chart.js on a canvas), with the same numbers in a table for screen readers and
// for anyone who prefers to read them.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js"
import { useEffect, useRef } from "preact/hooks"
import { count, microsToUsd, modelLabel } from "../format.ts"

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip)

export interface UsageDay {
  readonly day: string
  readonly model: string
  readonly provider: string
  readonly calls: number
  readonly input_tokens: number
  readonly output_tokens: number
  readonly billed_micros: number
  readonly billed_usd: string
}

// Colour-blind-safe palette (Okabe-Ito), readable on white.
const COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

/** Axis labels: cents for ordinary amounts, micro-dollars for the tiny ones a test or a quiet day produces. */
const dollars = (v: number) => `$${v === 0 ? "0" : v >= 0.01 ? v.toFixed(2) : v.toFixed(6).replace(/0+$/, "")}`

/** Every day of [from, to) as YYYY-MM-DD, so quiet days show as gaps rather than vanish. */
const daysBetween = (from: Date, to: Date) => {
  const days: Array<string> = []
  for (let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); t < to.getTime(); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10))
  }
  return days
}

export const UsageChart = ({ summary, from, to }: { summary: ReadonlyArray<UsageDay>; from: Date; to: Date }) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  const days = daysBetween(from, to)
  // Calls are told apart by provider too: local/local-chat and local-economy/local-chat are different prices.
  const labelOf = (d: UsageDay) => modelLabel(d.provider, d.model)
  const models = [...new Set(summary.map(labelOf))].sort()
  useEffect(() => {
    if (canvas.current === null) return
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: {
        labels: days.map((d) => d.slice(5)),
        datasets: models.map((model, i) => ({
          label: model,
          backgroundColor: COLOURS[i % COLOURS.length],
          data: days.map((day) => summary.filter((d) => d.day === day && labelOf(d) === model).reduce((s, d) => s + d.billed_micros, 0) / 1_000_000)
        }))
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "USD" }, ticks: { callback: (v) => dollars(Number(v)) } } },
        plugins: { legend: { position: "bottom" } }
      }
    })
    return () => chart.destroy()
  }, [summary, from.getTime(), to.getTime()])
  const totals = models.map((label) => {
    const rows = summary.filter((d) => labelOf(d) === label)
    return { label, calls: rows.reduce((s, d) => s + d.calls, 0), micros: rows.reduce((s, d) => s + d.billed_micros, 0) }
  })
  return (
    <figure class="chart">
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={`Spend per day by model, ${days[0]} to ${days[days.length - 1]}: ${totals.map((t) => `${t.label} ${microsToUsd(t.micros)} in ${t.calls} calls`).join("; ")}`} />
      </div>
      <figcaption>Spend per day, stacked by model (last {days.length} days, UTC).</figcaption>
      <details>
        <summary>Show the numbers by model</summary>
        <table>
          <thead><tr><th scope="col">Model</th><th scope="col">Calls</th><th scope="col">Spend</th></tr></thead>
          <tbody>
            {totals.map((t) => <tr key={t.label}><td>{t.label}</td><td>{count(t.calls)}</td><td>{microsToUsd(t.micros)}</td></tr>)}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
