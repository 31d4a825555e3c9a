/** Small statistics helpers for the benchmark (latencies in milliseconds). */

/** Nearest-rank percentile of an ascending-sorted array; NaN when empty. */
export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]
}

export const sortedCopy = (values: ArrayLike<number>): Float64Array => Float64Array.from(values).sort()

/** Median of the finite values; NaN when there are none. */
export const median = (values: ReadonlyArray<number>): number => {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (finite.length === 0) return Number.NaN
  const mid = finite.length >> 1
  return finite.length % 2 === 1 ? finite[mid] : (finite[mid - 1] + finite[mid]) / 2
}

/** A growable list of numbers without boxing every sample. */
export class Samples {
  private data = new Float64Array(4096)
  length = 0
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2)
      bigger.set(this.data)
      this.data = bigger
    }
    this.data[this.length++] = v
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort()
  }
}
