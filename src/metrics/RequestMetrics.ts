/**
 * Request counters and a latency histogram kept in process memory, rendered in the Prometheus text exposition
 * format (version 0.0.4). Labels are the matched route template (never the raw path: an unmatched path would let a
 * caller grow the label set without bound), the method and the status class (2xx..5xx).
 */

/** Upper bounds in seconds: from a cached answer (5 ms) to a long stream's time to first byte (30 s). */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const

/** The route label of a request no route matched. */
export const UNMATCHED_ROUTE = "unmatched"

interface Series {
  readonly labels: string
  count: number
}

interface Histogram {
  readonly labels: string
  readonly buckets: Array<number>
  count: number
  sum: number
}

export interface Gauge {
  readonly name: string
  readonly help: string
  readonly value: number
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")

const labelText = (labels: Readonly<Record<string, string>>) =>
  Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")

const number = (n: number) => (Number.isInteger(n) ? String(n) : String(Math.round(n * 1e6) / 1e6))

export class RequestMetrics {
  private readonly requests = new Map<string, Series>()
  private readonly errors = new Map<string, Series>()
  private readonly latency = new Map<string, Histogram>()

  /** One finished request (for a stream: when its headers were sent). */
  record(input: { readonly method: string; readonly route: string | null; readonly status: number; readonly seconds: number }) {
    const route = input.route ?? UNMATCHED_ROUTE
    const statusClass = `${Math.floor(input.status / 100)}xx`
    const requestLabels = labelText({ method: input.method, route, status_class: statusClass })
    bump(this.requests, requestLabels)
    if (input.status >= 500) bump(this.errors, labelText({ method: input.method, route }))
    const latencyLabels = labelText({ method: input.method, route })
    let histogram = this.latency.get(latencyLabels)
    if (histogram === undefined) {
      histogram = { labels: latencyLabels, buckets: LATENCY_BUCKETS.map(() => 0), count: 0, sum: 0 }
      this.latency.set(latencyLabels, histogram)
    }
    const seconds = Math.max(0, input.seconds)
    LATENCY_BUCKETS.forEach((bound, i) => {
      if (seconds <= bound) histogram.buckets[i]! += 1
    })
    histogram.count += 1
    histogram.sum += seconds
  }

  /** The exposition text: these counters, then the gauges measured at scrape time. */
  render(gauges: ReadonlyArray<Gauge> = []): string {
    const lines: Array<string> = []
    lines.push("# HELP gateway_http_requests_total HTTP requests answered, by route template, method and status class.")
    lines.push("# TYPE gateway_http_requests_total counter")
    for (const s of this.requests.values()) lines.push(`gateway_http_requests_total{${s.labels}} ${s.count}`)
    lines.push("# HELP gateway_http_errors_total HTTP requests answered with a 5xx status.")
    lines.push("# TYPE gateway_http_errors_total counter")
    for (const s of this.errors.values()) lines.push(`gateway_http_errors_total{${s.labels}} ${s.count}`)
    lines.push("# HELP gateway_http_request_duration_seconds Time until the response headers were sent.")
    lines.push("# TYPE gateway_http_request_duration_seconds histogram")
    for (const h of this.latency.values()) {
      LATENCY_BUCKETS.forEach((bound, i) => lines.push(`gateway_http_request_duration_seconds_bucket{${h.labels},le="${bound}"} ${h.buckets[i]}`))
      lines.push(`gateway_http_request_duration_seconds_bucket{${h.labels},le="+Inf"} ${h.count}`)
      lines.push(`gateway_http_request_duration_seconds_sum{${h.labels}} ${number(h.sum)}`)
      lines.push(`gateway_http_request_duration_seconds_count{${h.labels}} ${h.count}`)
    }
    for (const g of gauges) {
      lines.push(`# HELP ${g.name} ${g.help}`)
      lines.push(`# TYPE ${g.name} gauge`)
      lines.push(`${g.name} ${number(g.value)}`)
    }
    return lines.join("\n") + "\n"
  }
}

const bump = (map: Map<string, Series>, labels: string) => {
  const series = map.get(labels)
  if (series === undefined) map.set(labels, { labels, count: 1 })
  else series.count += 1
}
