import type { UpstreamUsage } from "../usage.ts"

/** Rewrites an upstream stream into the client's format as it arrives. */
export interface StreamTranslator {
  /**
   * Upstream data in, client frames out (possibly empty). `text` is the chunk decoded as UTF-8 (SSE formats read
   * it); `bytes` is the same chunk undecoded, for a binary upstream framing (the relay always passes it). Throws `MalformedUpstream` on a frame
   * it cannot read.
   */
  push(text: string, bytes?: Uint8Array): string
  /** True once the upstream's own end-of-answer event arrived and the client's terminal frames were written. */
  complete(): boolean
  /**
   * What to meter, for an upstream format the relay's SSE usage reader does not know (src/relay/usage.ts reads
   * OpenAI and Anthropic frames). Absent: the relay reads usage from the upstream bytes itself.
   */
  usage?(): UpstreamUsage
}
