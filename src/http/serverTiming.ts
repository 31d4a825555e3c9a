/**
 * The W3C Server-Timing header (https://www.w3.org/TR/server-timing/) for a request's stages: how long each step of
 * the gateway's pipeline took (authentication, idempotency, attestation, limits, hold, upstream, settlement), so a
 * client or an operator can see where a slow call spent its time, and the benchmark can break latency down.
 */

/** More stages than any request has; past it, stages are dropped instead of growing without bound. */
const MAX_STAGES = 32

/** A metric name is an HTTP token; ours are lowercase words with dashes. */
const NAME = /^[a-z][a-z0-9-]*$/

/**
 * Records, in order, the stages of one request. `end(name)` says stage `name` ended now: it lasted since the previous
 * stage ended, or since the request started. A stage name may repeat (the durations add up).
 */
export class StageClock {
  private readonly now: () => number
  private last: number
  private readonly stages: Array<[string, number]> = []

  constructor(now: () => number, startedAt: number) {
    this.now = now
    this.last = startedAt
  }

  end(name: string): void {
    const at = this.now()
    if (this.stages.length < MAX_STAGES && NAME.test(name)) {
      const same = this.stages.find(([n]) => n === name)
      if (same !== undefined) same[1] += at - this.last
      else this.stages.push([name, at - this.last])
    }
    this.last = at
  }

  /** `auth;dur=0.061, hold;dur=0.402, ..., total;dur=5.480` (ms, 3 decimals); `totalMs` is the whole request. */
  header(totalMs: number): string {
    return [...this.stages, ["total", totalMs] as [string, number]]
      .map(([name, ms]) => `${name};dur=${Math.max(0, ms).toFixed(3)}`)
      .join(", ")
  }
}

/** The metrics of a Server-Timing header value: name and duration in ms (metrics without `dur` are left out). */
export const parseServerTiming = (header: string | null | undefined): Array<{ readonly name: string; readonly ms: number }> => {
  if (header === null || header === undefined) return []
  const out: Array<{ name: string; ms: number }> = []
  for (const metric of header.split(",")) {
    const [name, ...params] = metric.split(";").map((p) => p.trim())
    const dur = params.find((p) => p.startsWith("dur="))
    const ms = dur === undefined ? Number.NaN : Number(dur.slice(4))
    if (name !== undefined && name !== "" && Number.isFinite(ms)) out.push({ name, ms })
  }
  return out
}
