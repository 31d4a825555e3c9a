/** Rewrites an upstream SSE stream into the client's format as it arrives. */
export interface StreamTranslator {
  /** Upstream text in, client frames out (possibly empty). Throws `MalformedUpstream` on a frame it cannot read. */
  push(text: string): string
  /** True once the upstream's own end-of-answer event arrived and the client's terminal frames were written. */
  complete(): boolean
}
